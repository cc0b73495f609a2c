"""Benchmark: a one-line candidate compiled warm (from HEAD's settled auxiliary files) against a cold check.

    python bench/bench_warm.py [--candidates 6] [--only NAME] [--unconfirmed]

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

Every passing warm compile is confirmed by one cold first run (warm = cold by
construction, see CompileGate._first_run_stops); `--unconfirmed` skips that run
to show what it costs (a measurement only: the gate has no such switch).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from pytest_patchwrite.gates import warm
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


def measure(name: str, root: Path, count: int) -> float:
    """Print one document's row; return its warm/cold ratio."""
    gate = CompileGate(root, use_cache=False)
    warm.STORE.clear()
    head = gate.compile(root)
    cold_s: list[float] = []
    warm_s: list[float] = []
    runs: list[int] = []
    kinds: Counter[str] = Counter()
    equal = 0
    for path, text in candidates(root, count):
        started = time.perf_counter()
        w = gate.compile(root, {path: text})
        warm_s.append(time.perf_counter() - started)
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
    starts = "; ".join(
        ", ".join(f"{k} {c[k]}" for k in ("warm", "warm+", "fallback", "cold") if c[k]) for c in (kinds, moved)
    )
    print(f"{name:<10} {'ok' if head.ok else 'FAILS':<5} {head.runs:>4} {statistics.median(runs):>9.0f} "
          f"{statistics.median(cold_s):>7.2f} {statistics.median(warm_s):>7.2f} {ratio:>7.2f}  "
          f"{equal}/{len(warm_s) + sum(moved.values())}  {starts}")  # fmt: skip
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=6, help="one-line candidates per document")
    parser.add_argument("--only", choices=("example", "bibtex", "biber", "xrefs"), default=None)
    parser.add_argument("--unconfirmed", action="store_true", help="skip the cold first run confirming warm passes")
    args = parser.parse_args()
    if args.unconfirmed:
        CompileGate._first_run_stops = lambda self, engine, work, entry: False  # type: ignore[method-assign]
    print(f"{'document':<10} {'HEAD':<5} {'runs':>4} {'cold runs':>9} {'cold s':>7} {'warm s':>7} {'ratio':>7}  "
          "same verdict  warm starts: one-word candidates; label or new key")  # fmt: skip
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("example", "bibtex", "biber", "xrefs"):
            if args.only not in (None, name):
                continue
            if name == "example":
                shutil.copytree(EXAMPLE, Path(tmp) / name)
                root = Path(tmp) / name / "main.tex"
            else:
                root = generate(name, Path(tmp) / name)
            ratios[name] = measure(name, root, args.candidates)
    if "bibtex" in ratios:
        print(f"warm/cold = {ratios['bibtex']:.2f}")


if __name__ == "__main__":
    main()
