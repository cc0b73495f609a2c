"""SIGKILL loop: what killed `try_patch` runs leave behind, before and after the sweep.

    python bench/bench_crash.py [--kills 300] [--compile]

Each round starts a process that commits edits to one manuscript in a loop (with `--compile`,
behind the real compile gate, so sandboxes exist; otherwise behind a gate that holds a
sandbox directory of the temp root while it "compiles"), and SIGKILLs it at a random instant.
After each kill it counts the temporary copy beside the file and the sandboxes of the killed
PID (the next process's sweep removes them); at the end it runs the sweep (one more
`try_patch`, then `sweep_temp_root`) and counts what is still there. It also
checks the file is whole after every kill. Prints one JSON object; no assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import sys, time
from pathlib import Path
from pytest_patchwrite.model import GateResult
from pytest_patchwrite.files.tempfiles import owned_temp_dir
from pytest_patchwrite.flows.transaction import try_patch

class SandboxGate:
    stage = "compile"
    def check(self, text, context):
        with owned_temp_dir("sandbox") as box:
            (Path(box) / "main.log").write_text(text)
            time.sleep(0.002)
        return GateResult(True, [], "compile")

path, use_compile = Path(sys.argv[1]), sys.argv[2] == "1"
if use_compile:
    from pytest_patchwrite.gates import default_gates
    gates = default_gates(path, evidence_gate=False)
else:
    gates = [SandboxGate()]
print("ready", flush=True)
i = 0
while True:
    i += 1
    try_patch(path, f"EDIT 3 3\nVersion {i} of the sentence.\n", gates)
"""

HEAD = "\\documentclass{article}\n\\begin{document}\nVersion 0 of the sentence.\n\\end{document}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=300)
    parser.add_argument("--compile", action="store_true", help="behind the real compile gate (needs pdflatex)")
    parser.add_argument("--max-delay", type=float, default=0.25, help="kill within this many seconds of ready")
    args = parser.parse_args()
    if args.compile and shutil.which("pdflatex") is None:
        raise SystemExit("--compile needs pdflatex")
    from pytest_patchwrite.files.tempfiles import TEMP_SUFFIX, sweep_temp_root, temp_root
    from pytest_patchwrite.flows.transaction import try_patch

    rng = random.Random(13)
    pids: list[int] = []
    torn = left_temps = left_boxes = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-crash-") as tmp:
        path = Path(tmp) / "main.tex"
        path.write_text(HEAD)
        for _ in range(args.kills):
            child = subprocess.Popen(
                [sys.executable, "-c", CHILD, str(path), "1" if args.compile else "0"],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            child.stdout.readline()
            time.sleep(rng.uniform(0, args.max_delay))
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            child.stdout.close()
            pids.append(child.pid)
            # what this kill left (the next process sweeps it, so count it now)
            left_temps += sum(1 for p in Path(tmp).iterdir() if p.name.endswith(TEMP_SUFFIX))
            left_boxes += sum(1 for p in temp_root().iterdir() if p.name.split("-")[1:2] == [str(child.pid)])
            text = path.read_text()
            lines = text.splitlines()
            torn += not (len(lines) == 4 and lines[2].startswith("Version ") and text.endswith("\\end{document}\n"))

        def leftovers() -> tuple[int, int]:
            temps = sum(1 for p in Path(tmp).iterdir() if p.name.endswith(TEMP_SUFFIX))
            boxes = sum(1 for p in temp_root().iterdir() for pid in pids if p.name.split("-")[1:2] == [str(pid)])
            return temps, boxes

        try_patch(path, "EDIT 3 3\nVersion final of the sentence.\n")  # sweeps the directory
        sweep_temp_root()
        temps_after, boxes_after = leftovers()
    print(
        json.dumps(
            {
                "kills": args.kills,
                "gate": "compile" if args.compile else "sandbox-holding",
                "torn_files": torn,
                "temp_copies_left_by_kills": left_temps,
                "sandboxes_left_by_kills": left_boxes,
                "temp_copies_after_sweep": temps_after,
                "sandboxes_after_sweep": boxes_after,
                "seconds": round(time.perf_counter() - started, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
