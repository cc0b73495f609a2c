"""Benchmark: a candidate through `patchwrite mcp` against `patchwrite apply` started as a process per candidate.

    python bench/bench_mcp.py [--candidates 5] [--only example|bibtex] [--repeat 3] [--json OUT]

Two documents: the example paper and a generated BibTeX (natbib) paper of 55 pages
(bench_warm.generate, 80 references). The same sequence of one-word, one-line candidates
(each accepted, spread over the document) is applied three ways, each on a fresh
copy of the document:

- `cold apply`: `patchwrite apply FILE EDIT --json` as a new process per candidate,
  each with a fresh, empty cache directory (no verdicts, no kept warm state);
- `warm apply`: the same, all sharing one cache directory that a `patchwrite check`
  filled first (so each apply starts from the kept state of its HEAD on disk);
- `server`: one `patchwrite mcp DIR` process, driven by the SDK's client (`ClientSession`
  over `stdio_client`), with a fresh cache and no check before: the first candidate
  starts cold, the later ones from the state the server keeps in memory.

It prints per document the median seconds of each (the server's first candidate
apart), every server candidate's seconds, and the ratios the issue
targets: `later / cold apply` (target <= 0.3) and `later / warm apply`. `--repeat N`
measures each document N times and prints the median ratios; `--json OUT` writes them.
One run, no assertions: timings belong here, not in the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_warm import EXAMPLE, generate  # noqa: E402

from pytest_patchwrite.edit import split_lines  # noqa: E402

CLI = [sys.executable, "-c", "import sys; from pytest_patchwrite.cli import main; sys.exit(main(sys.argv[1:]))"]


def edits(root: Path, count: int) -> list[tuple[str, str]]:
    """Return `count` (relpath, EDIT text) one-line candidates spread over the prose lines of the manuscript."""
    files = [root, *sorted(root.parent.rglob("sections/*.tex"))]
    prose = [(f, i) for f in files for i, line in enumerate(split_lines(f.read_text()), start=1)
             if line[:1].isalpha() and " " in line and "%" not in line]  # fmt: skip
    picked = [prose[round(k * (len(prose) - 1) / max(1, count - 1))] for k in range(count)]
    out = []
    for n, (path, number) in enumerate(picked):
        line = split_lines(path.read_text())[number - 1].rstrip("\n")
        words = line.split(" ")
        at = max(range(len(words)), key=lambda w: len(words[w]) if words[w].isalpha() else 0)
        words[at] = f"revised{n}"
        out.append((str(path.relative_to(root.parent)), f"```EDIT {number} {number}\n{' '.join(words)}\n```\n"))
    return out


def fresh_copy(source: Path, into: Path) -> Path:
    shutil.copytree(source.parent, into)
    return into / source.name


def env_with_cache(cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache)}


def apply_process(root: Path, rel: str, edit: str, cache: Path, scratch: Path) -> tuple[float, bool]:
    """Return (seconds, accepted) of one `patchwrite apply --json` process."""
    edit_file = scratch / "edit.txt"
    edit_file.write_text(edit)
    started = time.perf_counter()
    done = subprocess.run([*CLI, "apply", str(root.parent / rel), str(edit_file), "--json"], capture_output=True,
                          text=True, env=env_with_cache(cache))  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"apply failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, json.loads(done.stdout)["accepted"]


def process_applies(source: Path, cands: list[tuple[str, str]], work: Path, warm: bool) -> list[float]:
    """Return the seconds of `patchwrite apply` as a process per candidate: cold (a fresh cache each) or warm
    (one cache, filled by a `check` first)."""
    label = "warm" if warm else "cold"
    root = fresh_copy(source, work / label)
    if warm:
        subprocess.run([*CLI, "check", str(root)], capture_output=True, env=env_with_cache(work / "warm-cache"),
                       check=False)  # fmt: skip
    out = []
    for n, (rel, edit) in enumerate(cands):
        cache = work / ("warm-cache" if warm else f"cold-cache-{n}")
        seconds, accepted = apply_process(root, rel, edit, cache, work)
        assert accepted, edit
        out.append(seconds)
    return out


def server_candidates(source: Path, cands: list[tuple[str, str]], work: Path) -> list[float]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    root = fresh_copy(source, work / "server")
    cache = work / "server-cache"
    env = {"PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache)}
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", str(root.parent)], env=env)
    seconds: list[float] = []

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            await client.call_tool("list_manuscripts", {})
            for rel, edit in cands:
                started = time.perf_counter()
                result = await client.call_tool("apply_edit", {"path": rel, "edit": edit})
                seconds.append(time.perf_counter() - started)
                assert (result.structured_content or {}).get("accepted"), result.content[0].text

    anyio.run(main)
    return seconds


def measure(name: str, source: Path, count: int, work: Path) -> dict[str, float]:
    cands = edits(source, count)
    cold = process_applies(source, cands, work, warm=False)
    warm = process_applies(source, cands, work, warm=True)
    served = server_candidates(source, cands, work)
    later = statistics.median(served[1:])
    row = {
        "cold": statistics.median(cold),
        "warm": statistics.median(warm),
        "first": served[0],
        "later": later,
        "later/cold": later / statistics.median(cold),
        "later/warm": later / statistics.median(warm),
    }
    print(f"{name:<8} {row['cold']:>8.2f} {row['warm']:>8.2f} {row['first']:>8.2f} {row['later']:>8.2f} "
          f"{row['later/cold']:>10.2f} {row['later/warm']:>10.2f}  {' '.join(f'{s:.2f}' for s in served)}")  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=5, help="candidates per document (the first is cold)")
    parser.add_argument("--only", choices=("example", "bibtex"), default=None)
    parser.add_argument("--repeat", type=int, default=1, help="measure each document N times; report the medians")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file")
    args = parser.parse_args()
    print(f"{'document':<8} {'cold s':>8} {'warm s':>8} {'first s':>8} {'later s':>8} {'later/cold':>10} "
          f"{'later/warm':>10}  server, each candidate")  # fmt: skip
    rows: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
            for name in ("example", "bibtex"):
                if args.only not in (None, name):
                    continue
                work = Path(tmp) / name
                work.mkdir()
                source = EXAMPLE / "main.tex" if name == "example" else generate("bibtex", work / "source")
                rows.setdefault(name, []).append(measure(name, source, args.candidates, work))
    medians = {name: {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]}
               for name, runs in rows.items()}  # fmt: skip
    for name, row in medians.items():
        print(f"{name}: median later/cold = {row['later/cold']:.2f}, later/warm = {row['later/warm']:.2f} "
              f"over {len(rows[name])} run(s)")  # fmt: skip
    print("targets: later/cold <= 0.3")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"candidates": args.candidates, "median": medians, "runs": rows}, indent=2)
                             + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
