"""Benchmark: a one-line candidate compiled warm (from HEAD's settled auxiliary files) against a cold check.

    python bench/bench_warm.py [--candidates 6] [--only NAME] [--paper ROOT ...] [--repeat 3] [--json OUT]
                               [--unconfirmed | --sequential] [--whole-map | --map-ab] [--confirm-whole-map]

Four documents: the example paper and three generated larger ones (BibTeX with
natbib, biblatex with biber, many cross-references with hyperref). For each: HEAD
is compiled once (which keeps its state), then every one-line candidate (a word
changed on a prose line, spread over the document) is compiled warm and cold. It
prints the median seconds of each, their ratio, how each warm start went (`warm`:
one engine run; `warm+`: the bibliography tool or more runs; `fallback`: started
again cold), the same for two candidates that do move the auxiliary files (a new
label; a citation of a key HEAD never cites), and whether every warm verdict
equalled the cold one. The last line
is `warm/cold = R` for the BibTeX document. No assertion: timings belong here.

`--paper ROOT` adds a real paper (its tree is copied; its candidates are chosen
the same way). `--repeat N` measures every document N times and reports the
median ratio. Every warm compile is confirmed by one cold first run beside it
(warm = cold by construction, see gates/confirm.py); `--sequential` runs that
run after the warm one (as on a one-core machine) and `--unconfirmed` skips it,
to show what each step costs (measurements only: the gate has no such switches).
Each row also counts the confirmations that disagreed with the warm verdict
(the candidate then got the cold check: `fallback`), and the warm runs that read
a font map cut to HEAD's fonts and of them those that were void (gates/fontmap.py).
`--whole-map` makes warm runs read the whole map; `--map-ab` also times every
candidate warm with the whole map, beside the cut one, and prints that ratio.
`--confirm-whole-map` gives only the confirmations the whole map (as before
they read the warm run's cut map), to show what the cut saves there.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from pytest_patchwrite.gates import confirm, fontmap, warm
from pytest_patchwrite.gates.compile import CompileGate
from pytest_patchwrite.gates.report import CompileReport

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "paper"
WORDS = (
    "model encoder data training signal noise layer patch token robust sample method result baseline error "
    "measure network gradient feature domain shift label split metric variance bias estimate prior window"
).split()


def _sentence(rng: random.Random, cite: str = "") -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(10, 18))]
    return " ".join(words).capitalize() + (f"~{cite}" if cite else "") + "."


def _bib(keys: list[str]) -> str:
    return "".join(
        f"@article{{{k},\n  author = {{Author {i} and Other {i}}},\n  title = {{On the {WORDS[i % len(WORDS)]} of "
        f"things, part {i}}},\n  journal = {{Journal of Things}},\n  year = {{{1990 + i % 30}}},\n"
        f"  volume = {{{i}}},\n  pages = {{{i}--{i + 9}}}\n}}\n\n"
        for i, k in enumerate(keys)
    )


def generate(kind: str, directory: Path, sections: int = 24, paragraphs: int = 8) -> Path:
    """Write a long article of one kind (`bibtex`, `biber`, `xrefs`) into `directory`; return its root."""
    rng = random.Random(kind)
    keys = [f"ref{i:03d}" for i in range(80)]
    preamble = ["\\documentclass[11pt]{article}", "\\usepackage{amsmath}"]
    if kind == "bibtex":
        preamble.append("\\usepackage{natbib}")
    if kind == "biber":
        preamble += ["\\usepackage[backend=biber,style=authoryear]{biblatex}", "\\addbibresource{refs.bib}"]
    if kind == "xrefs":
        preamble.append("\\usepackage{hyperref}")
    body = ["\\begin{document}", "\\title{A Generated Study}", "\\author{Bench}", "\\maketitle", "\\tableofcontents"]
    for s in range(sections):
        body += [f"\\section{{Part {s + 1}: {rng.choice(WORDS)} and {rng.choice(WORDS)}}}", f"\\label{{sec:{s}}}"]
        for p in range(paragraphs):
            cite = ""
            if kind in ("bibtex", "biber"):
                cite = f"\\cite{{{rng.choice(keys)},{rng.choice(keys)}}}"
            lines = [_sentence(rng, cite if i == 0 else "") for i in range(6)]
            if kind == "xrefs":
                sec, eq, page = rng.randrange(sections), rng.randrange(paragraphs), rng.randrange(sections)
                refs = f"Section~\\ref{{sec:{sec}}}, Equation~\\eqref{{eq:{s}-{eq}}}"
                lines.append(f"See {refs} and page~\\pageref{{sec:{page}}}.")
                lines += ["\\begin{equation}", f"  x_{{{p}}} = {p} y + {s}", f"  \\label{{eq:{s}-{p}}}",
                          "\\end{equation}"]  # fmt: skip
            body += [*lines, ""]
        if kind != "biber":
            body += ["\\begin{table}[t]", "\\centering", f"\\caption{{Results of part {s + 1}.}}",
                     f"\\label{{tab:{s}}}", "\\begin{tabular}{lc}", "A & 1 \\\\", "B & 2 \\\\", "\\end{tabular}",
                     "\\end{table}", ""]  # fmt: skip
    if kind == "bibtex":
        body += ["\\bibliographystyle{plainnat}", "\\bibliography{refs}"]
    if kind == "biber":
        body.append("\\printbibliography")
    body.append("\\end{document}")
    directory.mkdir(parents=True)
    (directory / "refs.bib").write_text(_bib([*keys, "uncited"]))
    root = directory / "main.tex"
    root.write_text("\n".join(preamble + body) + "\n")
    return root


def candidates(root: Path, count: int) -> list[tuple[Path, str]]:
    """Return `count` one-line candidates spread over the document's prose lines: one word changed on each."""
    files = [root, *sorted(root.parent.rglob("sections/*.tex"))]
    prose = [(f, i) for f in files for i, line in enumerate(f.read_text().splitlines())
             if line[:1].isalpha() and " " in line]  # fmt: skip
    picked = [prose[round(k * (len(prose) - 1) / max(1, count - 1))] for k in range(count)]
    out = []
    for path, index in picked:
        lines = path.read_text().splitlines(keepends=True)
        words = lines[index].split(" ")
        at = max(range(len(words)), key=lambda w: len(words[w]) if words[w].isalpha() else 0)
        words[at] = "revised"
        lines[index] = " ".join(words)
        out.append((path, "".join(lines)))
    return out


def structural(root: Path) -> list[tuple[Path, str]]:
    """Return two candidates that move the auxiliary files: a new label on a prose line, a key HEAD never cites."""
    path, text = candidates(root, 1)[0]
    line = next(ln for ln in text.splitlines() if "revised" in ln)
    labelled = text.replace(line, line + "\\label{bench:new}", 1)
    cited = text.replace(line, line + "~\\cite{uncited}", 1) if "{refs" in root.read_text() else None
    return [(path, labelled)] + ([(path, cited)] if cited else [])


def verdict(report: CompileReport) -> tuple[object, ...]:
    return report.ok, report.violations, report.messages if report.ok else None


def whole_map(gate: CompileGate, root: Path, overrides: dict[Path, str]) -> float:
    """Return the seconds of a warm compile that reads pdfTeX's whole font map (gates.fontmap off)."""
    cut, fontmap.cut = fontmap.cut, lambda use, texts: None
    try:
        started = time.perf_counter()
        gate.compile(root, overrides)
        return time.perf_counter() - started
    finally:
        fontmap.cut = cut


def measure(name: str, root: Path, count: int, map_ab: bool = False) -> dict[str, object]:
    """Print one document's row; return its figures (the warm/cold ratio first)."""
    gate = CompileGate(root, use_cache=False)
    warm.STORE.clear()
    head = gate.compile(root)
    cold_s: list[float] = []
    warm_s: list[float] = []
    whole_s: list[float] = []
    runs: list[int] = []
    kinds: Counter[str] = Counter()
    equal = 0
    for path, text in candidates(root, count):
        started = time.perf_counter()
        w = gate.compile(root, {path: text})
        warm_s.append(time.perf_counter() - started)
        if map_ab:
            whole_s.append(whole_map(gate, root, {path: text}))
        started = time.perf_counter()
        c = gate.compile(root, {path: text}, warm_start=False)
        cold_s.append(time.perf_counter() - started)
        kinds[w.start] += 1
        runs.append(c.runs)
        equal += verdict(w) == verdict(c)
    moved: Counter[str] = Counter()
    for path, text in structural(root):
        w = gate.compile(root, {path: text})
        moved[w.start] += 1
        equal += verdict(w) == verdict(gate.compile(root, {path: text}, warm_start=False))
    ratio = statistics.median(warm_s) / statistics.median(cold_s)
    whole = statistics.median(whole_s) / statistics.median(cold_s) if whole_s else None
    starts = "; ".join(
        ", ".join(f"{k} {c[k]}" for k in ("warm", "warm+", "fallback", "cold") if c[k]) for c in (kinds, moved)
    )
    print(f"{name:<10} {'ok' if head.ok else 'FAILS':<5} {head.runs:>4} {statistics.median(runs):>9.0f} "
          f"{statistics.median(cold_s):>7.2f} {statistics.median(warm_s):>7.2f} {ratio:>7.2f}  "
          f"{equal}/{len(warm_s) + sum(moved.values())}  {gate.confirmations_failed}/{gate.confirmations}  "
          f"{gate.maps_void}/{gate.maps_cut}  {'' if whole is None else f'whole map {whole:.2f}  '}{starts}",
          flush=True)  # fmt: skip
    return {"ratio": round(ratio, 3), "cold_s": round(statistics.median(cold_s), 3),
            "warm_s": round(statistics.median(warm_s), 3), "head_ok": head.ok, "cold_runs": statistics.median(runs),
            "same_verdict": [equal, len(warm_s) + sum(moved.values())],
            "confirmations": gate.confirmations, "confirmations_disagreed": gate.confirmations_failed,
            "maps_cut": gate.maps_cut, "maps_void": gate.maps_void,
            **({"whole_map_ratio": round(whole, 3)} if whole is not None else {}),
            "starts": dict(kinds + moved)}  # fmt: skip


def documents(args: argparse.Namespace, tmp: Path) -> list[tuple[str, Path]]:
    """Return (name, root) of every document to measure, each in a fresh copy under `tmp`."""
    out = []
    for name in ("example", "bibtex", "biber", "xrefs"):
        if args.paper and args.only is None or args.only not in (None, name):
            continue
        if name == "example":
            shutil.copytree(EXAMPLE, tmp / name)
            out.append((name, tmp / name / "main.tex"))
        else:
            out.append((name, generate(name, tmp / name)))
    for n, paper in enumerate(map(Path, args.paper)):
        paper = paper.resolve()
        outputs = shutil.ignore_patterns(".git", "*.aux", "*.log", "*.blg", "*.out", "*.toc", "*.fls", "*.synctex.gz")
        shutil.copytree(paper.parent, tmp / f"paper{n}", ignore=outputs)
        out.append((paper.parent.parent.name if paper.parent.name == "paper" else paper.parent.name,
                    tmp / f"paper{n}" / paper.name))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=6, help="one-line candidates per document")
    parser.add_argument("--only", choices=("example", "bibtex", "biber", "xrefs"), default=None)
    parser.add_argument("--paper", action="append", default=[], help="a real paper's root (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, help="measure each document N times; report the median")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file")
    parser.add_argument("--unconfirmed", action="store_true", help="skip the cold first run confirming warm runs")
    parser.add_argument("--sequential", action="store_true", help="run the confirmation after the warm run")
    parser.add_argument("--whole-map", action="store_true", help="warm runs read pdfTeX's whole font map")
    parser.add_argument("--map-ab", action="store_true",
                        help="also time each candidate warm with the whole font map (the ratio beside)")  # fmt: skip
    parser.add_argument("--confirm-whole-map", action="store_true", help="confirmations read the whole font map")
    args = parser.parse_args()
    if args.confirm_whole_map:
        first_run = CompileGate._first_run

        def whole(self, engine, work, entry, fonts, cancel, font_rule=None):  # type: ignore[no-untyped-def]
            fonts = dataclasses.replace(fonts, map_over=None) if fonts is not None else None
            return first_run(self, engine, work, entry, fonts, cancel, None)

        CompileGate._first_run = whole  # type: ignore[method-assign]
    if args.unconfirmed:
        CompileGate._first_run = lambda self, *a, **k: confirm.FirstRun()  # type: ignore[method-assign]
        confirm.agrees = lambda warm_first, cold_first, linked: True  # type: ignore[assignment]
    if args.sequential:
        confirm.cores = lambda: 1
    if args.whole_map:
        fontmap.cut = lambda use, texts: None  # type: ignore[assignment]
    print(f"{'document':<10} {'HEAD':<5} {'runs':>4} {'cold runs':>9} {'cold s':>7} {'warm s':>7} {'ratio':>7}  "
          "same verdict  disagreed  map void/cut  warm starts: one-word candidates; label or new key")  # fmt: skip
    figures: dict[str, list[dict[str, object]]] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            for name, root in documents(args, Path(tmp)):
                figures.setdefault(name, []).append(measure(name, root, args.candidates, args.map_ab))
    medians = {name: statistics.median(float(str(f["ratio"])) for f in runs) for name, runs in figures.items()}
    for name, ratio in medians.items():
        print(f"{name}: median warm/cold = {ratio:.2f} over {len(figures[name])} run(s)")
    if args.json is not None:
        mode = "unconfirmed" if args.unconfirmed else "sequential" if args.sequential else "beside"
        mode += ", whole font map" if args.whole_map else ", cut font map"
        mode += " (confirmations: whole map)" if args.confirm_whole_map else ""
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"confirmation": mode, "candidates": args.candidates, "median_ratio": medians,
                                         "runs": figures}, indent=2) + "\n")  # fmt: skip
    if "bibtex" in medians:
        print(f"warm/cold = {medians['bibtex']:.2f}")


if __name__ == "__main__":
    main()
