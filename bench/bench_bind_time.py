"""Benchmark: `patchwrite bind` seconds per labelled paper, this tree against another, in one run.

    python bench/bench_bind_time.py [--set A B C] [--against TREE] [--rows 1000000] [--json OUT]

For every tests/bind_papers paper of the chosen sets (never set D's bindings: this prints times only) a
scratch copy gets the `% !patchwrite log = ...` comment of its labels and is bound as a user binds it,
`patchwrite bind ROOT --json --timeout 3000`, in a subprocess of this tree and, with --against, of another
source tree (a `git archive` of an older commit), one after the other. Prints per paper the wall seconds,
the CPU seconds of the child (user + system: what one idle core would take) and the exit code, whether
the two trees wrote byte-identical bindings files and `--json` output, the load average, and the bind
of a small paper beside a CSV log of --rows rows. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_bindings import big_log_paper, with_logs

REPO = Path(__file__).resolve().parent.parent
PAPERS = REPO / "tests" / "bind_papers"


def bind(tree: Path, root: Path) -> dict[str, Any]:
    """Bind `root` with the code of `tree` in a subprocess; return seconds, CPU seconds, exit, file and stdout."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main(sys.argv[1:]))"
    bindings = root.with_name(root.stem + ".bindings.json")
    bindings.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, "bind", str(root), "--json", "--timeout", "3000"],
                          cwd=root.parent, env=env, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    written = bindings.read_bytes() if bindings.is_file() else b""
    return {"seconds": round(wall, 2), "cpu": round(cpu, 2), "exit": done.returncode, "file": written,
            "stdout": done.stdout}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", nargs="+", default=["A", "B", "C"], choices=["A", "B", "C"])
    parser.add_argument("--against", type=Path, help="another source tree to time first (the code before)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = {"before": args.against.resolve()} if args.against else {}
    trees["after"] = REPO
    out: dict[str, Any] = {"load_start": os.getloadavg(), "papers": []}
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in out['load_start'])}")
    print(f"{'paper':16} set " + "".join(f"{name + ' s':>10}{name + ' cpu':>12} exit" for name in trees) + "  same")
    for folder in sorted(p for p in PAPERS.iterdir() if (p / "labels.json").is_file()):
        data = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        if data.get("set") not in args.set:
            continue
        runs = {}
        for name, tree in trees.items():
            scratch = Path(tempfile.mkdtemp(prefix="bindtime-"))
            try:  # the same path for both trees, so `--json` output compares byte for byte
                root = with_logs(folder, data["root"], data["logs"], scratch / folder.name)
                runs[name] = bind(tree, root)
            finally:
                shutil.rmtree(scratch)
        same = None
        if len(runs) == 2:
            same = all(runs["before"][k] == runs["after"][k] for k in ("file", "stdout", "exit"))
        row = {"paper": folder.name, "set": data["set"], "identical_bindings": same,
               **{name: {k: r[k] for k in ("seconds", "cpu", "exit")} for name, r in runs.items()}}  # fmt: skip
        out["papers"].append(row)
        cells = "".join(f"{r['seconds']:>10.2f}{r['cpu']:>12.2f} {r['exit']:>4}" for r in runs.values())
        verdict = "" if same is None else "yes" if same else "NO"
        print(f"{folder.name:16} {data['set']:>3} {cells}  {verdict}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        root = big_log_paper(args.rows, Path(scratch))
        big = bind(REPO, root)
    out["big_log"] = {"rows": args.rows, "seconds": big["seconds"], "cpu": big["cpu"], "exit": big["exit"]}
    print(f"bind beside a {args.rows:,}-row CSV log: {big['seconds']:.2f} s wall, {big['cpu']:.2f} s CPU, "
          f"exit {big['exit']}")  # fmt: skip
    out["load_end"] = os.getloadavg()
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in out['load_end'])}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
