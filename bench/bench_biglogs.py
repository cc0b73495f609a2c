"""Benchmark: `patchwrite check` and `patchwrite bind` beside a big experimental log (peak RSS and time, one run).

    python bench/bench_biglogs.py [--mb 200] [--kinds csv,txt] [--json OUT]

Writes a CSV log and a plain-text log of about MB megabytes each (a training run: step, loss,
accuracy, learning rate; the reported test accuracy on the last line), a manuscript printing that
accuracy, and runs, each in a fresh process (`pytest_patchwrite.cli.main` in-process, so the peak
RSS is the Python side's alone; the engine runs in its own sandboxed processes):

- `check --no-cache` without a bindings file (the pool rule);
- `bind` (writes the bindings file);
- `check --no-cache` with it (the bindings lock and the pool read the log).

`check` runs with `--timeout 900` (the evidence locks obey it too), so a slow side finishes
rather than reporting a timeout; `--cases` picks some of the three.

Prints seconds and peak RSS (resource.getrusage) per case and the exit code; no assertion. Compare
two runs of two checkouts with `PYTHONPATH=<checkout> python bench/bench_biglogs.py`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

MANUSCRIPT = """% !patchwrite log = {log}
\\documentclass{{article}}
\\begin{{document}}
The final test accuracy was 91.372\\% after the last epoch.
\\end{{document}}
"""

RUN = """
import contextlib, io, json, resource, sys, time
from pytest_patchwrite.cli import main
started = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
result = {"code": code, "seconds": round(seconds, 2), "peak_rss_mb": round(peak, 1)}
try:
    shown = json.loads(out.getvalue())
except ValueError:
    shown = {}
if "manuscripts" in shown:
    gates = shown["manuscripts"][0]["gates"]
    result["gates"] = {name: gate.get("ok") for name, gate in gates.items()}
    result["numbers"] = [v["kind"] for v in gates.get("numbers", {}).get("violations", [])]
elif "counts" in shown:
    result["counts"] = {k: shown["counts"][k] for k in ("numbers", "bound", "unattested")}
print(json.dumps(result))
"""


def make_log(path: Path, kind: str, megabytes: float) -> None:
    """Write a CSV or text training log of about `megabytes` MB whose last line holds the test accuracy 0.91372."""
    rng = random.Random(7)
    target = int(megabytes * 1024 * 1024)
    written, step = 0, 0
    with open(path, "w") as handle:
        if kind == "csv":
            written += handle.write("step,epoch,loss,accuracy,lr\n")
        while written < target:
            lines = []
            for _ in range(10_000):
                loss, acc, lr = 1 + 2 * rng.random(), 0.9 * rng.random(), 3e-4 * rng.random()
                if kind == "csv":
                    lines.append(f"{step},{step // 1000},{loss:.6f},{acc:.4f},{lr:.3e}\n")
                else:
                    lines.append(f"step {step} epoch {step // 1000} loss {loss:.6f} acc {acc:.4f} lr {lr:.3e}\n")
                step += 1
            written += handle.write("".join(lines))
        handle.write("99999999,999,0.5,0.91372,0.0003\n" if kind == "csv" else "final test accuracy 0.91372\n")


def run(argv: list[str], cwd: Path) -> dict[str, float | int]:
    """Run the CLI with `argv` in a fresh process; return its exit code, seconds and peak RSS."""
    proc = subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, cwd=cwd)
    lines = proc.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        return {"code": proc.returncode, "seconds": -1.0, "peak_rss_mb": -1.0, "error": proc.stderr[-400:]}  # type: ignore[dict-item]
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200.0)
    parser.add_argument("--kinds", default="csv,txt")
    parser.add_argument("--timeout", type=float, default=900.0, help="check --timeout (the Python side obeys it too)")
    parser.add_argument("--cases", default="check (pool),bind,check (bindings)")
    parser.add_argument("--json", default=None, help="also write every figure to this file")
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="bench-biglogs-") as tmp:
        for kind in args.kinds.split(","):
            paper = Path(tmp) / kind
            paper.mkdir()
            log = paper / f"train.{kind}"
            make_log(log, kind, args.mb)
            root = paper / "main.tex"
            root.write_text(MANUSCRIPT.format(log=log.name))
            size = log.stat().st_size / 1024 / 1024
            for case, argv in (
                ("check (pool)", ["check", str(root), "--no-cache", "--json", "--timeout", str(args.timeout)]),
                ("bind", ["bind", str(root), "--json"]),
                ("check (bindings)", ["check", str(root), "--no-cache", "--json", "--timeout", str(args.timeout)]),
            ):
                if case not in args.cases.split(","):
                    continue
                result = {"log": f"{kind} {size:.0f} MB", "case": case, **run(argv, paper)}
                figures.append(result)
                print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
