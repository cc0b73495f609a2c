"""Benchmark: the compile gate against the bare engine on the same files, in one run.

    python bench/bench_compile.py [--repeat 7]
    python bench/bench_compile.py --python-side [--repeat 5]

Prints medians and ratios; no assertion (timings belong here, not in tests). The `sandbox` column is
the gate with its OS sandbox over the same gate trusted (no sandbox), interleaved in the same run.
`--python-side`: the seconds one `check` spends outside the engine's runs (reading, hashing, copying,
scanning, the locks) on the example paper and on a 40-file manuscript; run it with `PYTHONPATH` set to
an older checkout to compare revisions (the check API it uses is the same).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.gates.compile import CompileGate

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "paper"
MINI = r"""\documentclass{article}
\begin{document}
\section{Method}
The encoder uses 12 layers and a frozen tokenizer~\cite{smith2020}.
\section{Results}
Accuracy was 91.4 compared with the baseline 68.2~\cite{lee2019}.
\begin{thebibliography}{9}
\bibitem{smith2020} J. Smith. Encoders. 2020.
\bibitem{lee2019} M. Lee. Baselines. 2019.
\end{thebibliography}
\end{document}
"""


def bare(paper: Path, root: str, steps: list[list[str]]) -> float:
    """Return the seconds of the bare tool sequence in a fresh copy (no gate, no sandbox)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "p"
        shutil.copytree(paper, work)
        started = time.perf_counter()
        for step in steps:
            subprocess.run(step, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=False)
        return time.perf_counter() - started


def gated(root: Path, **options: object) -> float:
    gate = CompileGate(use_cache=False, **options)  # type: ignore[arg-type]
    report = gate.compile(root)
    assert report.ok, report.violations
    return report.seconds


def forty_files(directory: Path) -> Path:
    """Return the root of a manuscript of 40 files: a root, 39 \\input sections, a bibliography and a JSON log."""
    directory.mkdir(parents=True, exist_ok=True)
    values = {f"run{i}": {"acc": round(60 + i * 0.7, 2), "f1": round(0.5 + i / 100, 3)} for i in range(39)}
    (directory / "results.json").write_text(json.dumps(values))
    (directory / "refs.bib").write_text("".join(
        f"@article{{key{i}, title={{Work {i}}}, author={{A. Author}}, year={{{2000 + i % 20}}}, journal={{J}}}}\n"
        for i in range(100)))  # fmt: skip
    for i in range(39):
        lines = [f"\\section{{Part {i}}}"]
        for j in range(30):
            run = values[f"run{(i + j) % 39}"]
            lines.append(f"Run {j} reached {run['acc']} accuracy and {run['f1']} F1~\\cite{{key{(i * 7 + j) % 100}}}.")
        (directory / f"sec{i:02d}.tex").write_text("\n".join(lines) + "\n")
    inputs = "\n".join(f"\\input{{sec{i:02d}}}" for i in range(39))
    root = directory / "main.tex"
    root.write_text(f"% !patchwrite log = results.json\n\\documentclass{{article}}\n\\begin{{document}}\n{inputs}\n"
                    "\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n")  # fmt: skip
    return root


def python_side(root: Path, repeat: int) -> tuple[float, float]:
    """Return the medians of (a `check`'s seconds, its seconds outside the engine's runs), cold each time."""
    from pytest_patchwrite.engine import sandbox
    from pytest_patchwrite.flows.check import CheckOptions, check_manuscript
    from pytest_patchwrite.gates import warm

    in_engine = [0.0]
    run = sandbox.run

    def timed(*args: object, **kwargs: object) -> object:
        started = time.perf_counter()
        try:
            return run(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            in_engine[0] += time.perf_counter() - started

    sandbox.run = timed  # type: ignore[assignment]
    totals, pythons = [], []
    try:
        for _ in range(repeat):
            warm.STORE.clear()
            in_engine[0] = 0.0
            started = time.perf_counter()
            results = check_manuscript(root, CheckOptions(use_cache=False))
            total = time.perf_counter() - started
            assert results["compile"].ok, results["compile"].violations
            totals.append(total)
            pythons.append(total - in_engine[0])
    finally:
        sandbox.run = run  # type: ignore[assignment]
    return statistics.median(totals), statistics.median(pythons)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--python-side", action="store_true", help="time a check outside the engine's runs")
    args = parser.parse_args()
    if args.python_side:
        import pytest_patchwrite

        print(f"package: {Path(pytest_patchwrite.__file__).parent}")
        print(f"{'check, Python side':30} {'total s':>8} {'python s':>9} {'share':>6}")
        with tempfile.TemporaryDirectory() as tmp:
            for name, root in (("example paper", EXAMPLE / "main.tex"), ("40-file manuscript", forty_files(Path(tmp)))):
                total, python = python_side(root, args.repeat)
                print(f"{name:30} {total:8.3f} {python:9.3f} {python / total:6.2f}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        mini = Path(tmp) / "mini"
        mini.mkdir()
        (mini / "mini.tex").write_text(MINI)
        pdf = ["pdflatex", "-interaction=nonstopmode", "-no-shell-escape"]
        cases = [
            ("mini-article, one run", mini, "mini.tex", [[*pdf, "mini.tex"]], {"resolve": False}),
            ("mini-article, resolved", mini, "mini.tex", [[*pdf, "mini.tex"]] * 2, {}),
            ("example paper, one run", EXAMPLE, "main.tex", [[*pdf, "main.tex"]], {"resolve": False}),
            (
                "example paper, with bibtex",
                EXAMPLE,
                "main.tex",
                [[*pdf, "main.tex"], ["bibtex", "main"], [*pdf, "main.tex"], [*pdf, "main.tex"]],
                {},
            ),
        ]
        print(f"{'case':30} {'bare s':>8} {'gate s':>8} {'ratio':>6} {'open s':>8} {'sandbox':>8}")
        for name, paper, root, steps, options in cases:
            bare_s, gate_s, open_s = [], [], []
            for _ in range(args.repeat):  # interleaved so machine noise hits all alike
                bare_s.append(bare(paper, root, steps))
                gate_s.append(gated(paper / root, **options))
                open_s.append(gated(paper / root, trusted=True, **options))
            b, g, o = statistics.median(bare_s), statistics.median(gate_s), statistics.median(open_s)
            print(f"{name:30} {b:8.3f} {g:8.3f} {g / b:6.2f} {o:8.3f} {g / o:8.3f}")
        cache = Path(tmp) / "cache"
        gate = CompileGate(cache_dir=cache)
        gate.compile(EXAMPLE / "main.tex")
        hits = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            gate.compile(EXAMPLE / "main.tex")
            hits.append(time.perf_counter() - started)
        print(f"{'example paper, cached re-check':30} {'':8} {statistics.median(hits):8.3f}")


if __name__ == "__main__":
    main()
