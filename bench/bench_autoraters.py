"""Benchmark: the autoraters' matcher quality on TeX Live's biblatex-examples.bib, their speed, and the local judge.

    python bench/bench_autoraters.py [--local]

Prints figures; no assertion. `--local` also runs the bundled SmolLM2 model as a judge on the shipped
example papers (slow on two shared cores: several minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.autoraters.citation_metrics import citation_f1
from pytest_patchwrite.autoraters.matching import match_references
from pytest_patchwrite.autoraters.references import Reference, _entries, latex_to_text, reference_from_fields
from pytest_patchwrite.cli import main
from pytest_patchwrite.engine import kpse
from pytest_patchwrite.snapshot.bib import resolve_bib

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def rewrite(fields: dict[str, str], how: int) -> dict[str, str]:
    """Return the same work written differently: case, braces, accents decoded, punctuation, id forms."""
    out = dict(fields)
    title = fields.get("title", "")
    if how % 4 == 0:
        out["title"] = latex_to_text(title).lower()  # accents as Unicode, lower case
    elif how % 4 == 1:
        out["title"] = re.sub(r"[{}]", "", title).upper()
    elif how % 4 == 2:
        out["title"] = re.sub(r"[^\w\s\\{}\"']", " ", title)  # punctuation gone
    else:
        out["title"] = "{" + title + "}."
    if "doi" in fields:
        out.pop("doi")
        out["url"] = "https://doi.org/" + fields["doi"].upper()
    if "eprint" in fields:
        bare = re.sub(r"v\d+$", "", fields["eprint"])
        out["eprint"] = bare if how % 2 else f"{bare}v9"
    return out


def matcher_quality() -> None:
    path = resolve_bib("biblatex-examples", Path.cwd(), tex_tree=kpse.find)
    if path is None:
        print("matcher: biblatex-examples.bib not found (apt-get install texlive-bibtex-extra)")
        return
    entries = {k: f for k, f in _entries([path]).items() if f.get("title")}
    keys = sorted(entries)
    gt_keys, pool = keys[::2], keys[1::2]
    gt = [reference_from_fields(i + 1, k, entries[k]) for i, k in enumerate(gt_keys)]
    rewritten = gt_keys[::2]  # half of the GT works appear in the generated list, written differently
    gen_keys = [f"{k}~" for k in rewritten] + pool  # the other half of the file: different works, as distractors
    gen = [reference_from_fields(i + 1, k, rewrite(entries[k.rstrip("~")], i) if k.endswith("~") else entries[k])
           for i, k in enumerate(gen_keys)]  # fmt: skip
    matching = match_references(gt, gen)
    truth = {(k, f"{k}~") for k in rewritten}
    made = {(gt[m.gt].key, gen[m.gen].key) for m in matching.matches}
    right = made & truth
    wrong = sorted(made - truth)
    print(f"matcher on biblatex-examples.bib: GT {len(gt)} works, generated {len(gen)} ({len(truth)} rewritten GT "
          f"works + {len(pool)} other works of the file)")  # fmt: skip
    print(f"  precision {len(right) / len(made):.3f} ({len(right)}/{len(made)}), recall "
          f"{len(right) / len(truth):.3f} ({len(right)}/{len(truth)})")  # fmt: skip
    for g, h in wrong:
        other = entries[h.rstrip("~")].get("title", "")[:50]
        print(f"  false match: {g} [{entries[g].get('title', '')[:50]}] ~ {h} [{other}]")
    for g, _h in sorted(truth - made):
        print(f"  missed: {g} [{entries[g].get('title', '')[:60]}]")


WORDS = ("deep learning vision language model robust patch token encoder graph neural network attention sparse "
         "diffusion policy reward agent benchmark dataset survey causal kernel bayesian optimal transport").split()


def synthetic(n: int, seed: int) -> list[Reference]:
    rng = random.Random(seed)
    refs = []
    for i in range(n):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 10))) + f" {i}"
        refs.append(reference_from_fields(i + 1, f"k{i}", {"title": title, "year": str(2000 + i % 25)}))
    return refs


def median_seconds(fn, repeat: int = 5) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def speed() -> None:
    gt = synthetic(200, 1)
    gen = [reference_from_fields(i + 1, f"g{i}", {"title": r.title.upper() + ".", "year": r.year})
           for i, r in enumerate(gt[:150])] + synthetic(50, 2)  # fmt: skip
    seconds = median_seconds(lambda: match_references(gt, gen))
    f1_seconds = median_seconds(lambda: citation_f1(gt, gen))
    print(f"matching 200 vs 200 references: {seconds * 1000:.1f} ms median ({f1_seconds * 1000:.1f} ms for "
          f"citation_f1 with dedup); matched {len(match_references(gt, gen).matches)}")  # fmt: skip
    rng = random.Random(3)
    choices = ["paper_1", "paper_2", "tie", "paper_1", "paper_2", "Paper A"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v.jsonl"
        path.write_text("".join(json.dumps({"pair": i, "call1": rng.choice(choices), "call2": rng.choice(choices)})
                                + "\n" for i in range(1000)))  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()):
            seconds = median_seconds(lambda: main(["rate", "sxs", "--verdicts", str(path), "--json"]))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "rate", "sxs", "--verdicts", str(path)],
                       check=True, capture_output=True)  # fmt: skip
        whole = time.perf_counter() - start
    print(f"1,000-pair --verdicts file: {seconds * 1000:.1f} ms in process, {whole:.2f} s as a fresh CLI process")


def local_judge() -> None:
    from pytest_patchwrite.autoraters.judges import make_judge, run_sxs, score_litreview
    from pytest_patchwrite.autoraters.litreview import validate
    from pytest_patchwrite.autoraters.references import load_references

    judge = make_judge("local", None)
    a, b = EXAMPLES / "paper" / "main.tex", EXAMPLES / "broken-paper" / "main.tex"
    calls = parsed = disagree = pairs = 0
    # (b, a) would send the same two prompts as (a, b), swapped: one pair per aspect holds all there is
    for aspect in ("paper", "litreview"):
        for first, second in ((a, b),):
            result = run_sxs(judge, first, second, aspect)
            pairs += 1
            calls += 2
            parsed += sum(1 for c in result.calls if c.ok)
            disagree += bool(result.row and not result.row.consistent)
            seconds = sum(c.seconds for c in result.calls)
            print(f"  sxs {aspect} A={first.parent.name} B={second.parent.name}: winners {result.winners} -> "
                  f"{result.outcome} ({seconds:.0f} s)")  # fmt: skip
    print(f"local judge (SmolLM2-135M, grammar): {parsed}/{calls} replies parsed and validated; the two orders "
          f"disagree on {disagree}/{pairs} pairs")  # fmt: skip
    for paper in (a, b):
        count = load_references(paper).unique_works()
        call = score_litreview(judge, paper, count, 59.18)
        report = validate(call.data, count, 59.18)
        print(f"  litreview {paper.parent.name}: parsed {call.ok}, overall {report.overall_score}, recomputed "
              f"{report.recomputed['expected']}, valid {report.valid}, caps broken "
              f"{[v['rule'] for v in report.cap_violations]} ({call.seconds:.0f} s)")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local", action="store_true", help="also run the bundled model as a judge")
    args = parser.parse_args()
    matcher_quality()
    speed()
    if args.local:
        local_judge()
