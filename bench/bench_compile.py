"""Benchmark: the compile gate against the bare engine on the same files, in one run.

    python bench/bench_compile.py [--repeat 7]

Prints medians and ratios; no assertion (timings belong here, not in tests). The `sandbox` column is
the gate with its OS sandbox over the same gate trusted (no sandbox), interleaved in the same run.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
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
