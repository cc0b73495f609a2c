"""Benchmark: the evidence locks on the example paper and on a generated 5,000-line manuscript.

    python bench/bench_evidence.py [--repeat 9]

Targets (issue 4): under 50 ms and under 500 ms. Prints medians; no assertion.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paper" / "main.tex"


def generate(directory: Path, lines: int) -> Path:
    """Write a manuscript of about `lines` lines with prose, tables, math and citations."""
    keys = [f"key{i}" for i in range(200)]
    (directory / "refs.bib").write_text("".join(f"@misc{{{k}, title={{T{k}}}, year=2020}}\n" for k in keys))
    values = {f"m{i}": round(0.5 + i / 1000, 4) for i in range(400)}
    (directory / "log.json").write_text(json.dumps(values))
    body: list[str] = []
    i = 0
    while len(body) < lines:
        v = values[f"m{i % 400}"]
        body += [
            f"\\section{{Part {i}}}\\label{{sec:{i}}}",
            f"Accuracy was {v * 100:.1f}\\% against {v:.3f} in Section~\\ref{{sec:{i}}} \\citep{{{keys[i % 200]}}}.",
            "% a comment with 99.9 that is ignored",
            f"We trained GPT-2 with $\\alpha = {v:.2f}$ and $x^2$ for 12 epochs \\cite{{{keys[(i * 7) % 200]}}}.",
            "\\begin{tabular}{lcc}",
            f"A & {v:.2f} & {v * 100:.1f} \\\\",
            "\\end{tabular}",
        ]
        i += 1
    root = directory / "big.tex"
    root.write_text(
        "% !patchwrite log = log.json\n\\documentclass{article}\n\\usepackage{natbib}\n\\begin{document}\n"
        + "\n".join(body)
        + "\n\\bibliography{refs}\n\\end{document}\n"
    )
    return root


def measure(root: Path, repeat: int) -> tuple[float, int]:
    times = []
    report = None
    for _ in range(repeat):
        started = time.perf_counter()
        report = evaluate(load_manuscript(root), EvidenceConfig())
        times.append(time.perf_counter() - started)
    assert report is not None
    return statistics.median(times), len(report.citations) + len(report.numbers or []) + len(report.placeholders)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = generate(Path(tmp), 5000)
        lines = len(big.read_text().splitlines())
        for name, root, target in (("example paper", EXAMPLE, 0.050), (f"generated, {lines} lines", big, 0.500)):
            seconds, violations = measure(root, args.repeat)
            print(f"{name:28} {seconds * 1000:8.1f} ms  (target {target * 1000:.0f} ms, {violations} violations)")


if __name__ == "__main__":
    main()
