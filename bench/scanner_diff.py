"""Measure: what the number scanner reads on real papers, now and at an earlier revision, one run.

    python bench/scanner_diff.py [--against REV] [--show] ROOT_OR_DIR ...

A paper is a root `.tex` (`\\documentclass` before `\\begin{document}`) and every file it
`\\input`s; a directory stands for every root under it. Both scanners read the same texts: the
package as it is here, and `pytest_patchwrite/` of git revision REV (default: 3da8e33, the last
revision before the issue-18 scanner fixes), unpacked into a temporary directory and run in a
child process. Counted per paper: the empirical numbers of the default policy (`decimals`: a
fraction, a percentage or a siunitx number), the ones each scanner alone yields (`--show` lists
them by file and line: judge each), and the empirical numbers that stand in a sentence with a
`\\cite` (those the lock reports as `cited_number` warnings when no log attests them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DUMP = r"""
import json, sys
from pytest_patchwrite.tex.latex import scan
out = {}
for path in json.load(sys.stdin):
    text = open(path, encoding="utf-8", errors="replace").read()
    found = scan(text, path)
    cited = getattr(found, "cited_sentences", {})
    out[path] = [[n.line, n.text, str(n.value), n.decimals > 0 or n.percent or n.siunitx,
                  getattr(n, "sentence", -1) in cited] for n in found.numbers]
json.dump(out, sys.stdout)
"""


def roots(args: list[str]) -> list[Path]:
    """Return the root manuscripts named or found under the given paths."""
    from pytest_patchwrite.tex.texinputs import is_root

    found: list[Path] = []
    for arg in args:
        path = Path(arg)
        candidates = sorted(p for p in path.rglob("*.tex") if p.is_file()) if path.is_dir() else [path]
        found.extend(p for p in candidates if is_root(p.read_text(encoding="utf-8", errors="replace")))
    return found


def dump(files: list[str], pythonpath: Path) -> dict[str, list[list]]:
    """Return each file's numbers as the package at `pythonpath` scans them (in a child process)."""
    done = subprocess.run(
        [sys.executable, "-c", DUMP],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
        cwd=pythonpath,  # `python -c` imports from its working directory first
        check=True,
    )
    return json.loads(done.stdout)


def unpack(rev: str, into: Path) -> Path:
    """Return a directory holding `pytest_patchwrite/` as it was at `rev`."""
    archive = into / "old.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", rev, "pytest_patchwrite"], cwd=REPO, stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "old", filter="data")
    return into / "old"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--against", default="3da8e33", help="git revision of the scanner to compare with")
    parser.add_argument("--show", action="store_true", help="list every number only one scanner yields")
    args = parser.parse_args()
    from pytest_patchwrite.errors import InputError
    from pytest_patchwrite.snapshot.manuscript import load_manuscript

    papers: dict[Path, list[str]] = {}
    for root in roots(args.paths):
        try:
            papers[root] = [str(f) for f in load_manuscript(root).files]
        except InputError as exc:  # what `patchwrite check` would refuse: not a paper to count
            print(f"skipped {exc}", file=sys.stderr)
    files = sorted({f for fs in papers.values() for f in fs})
    with tempfile.TemporaryDirectory() as tmp:
        old = dump(files, unpack(args.against, Path(tmp)))
    new = dump(files, REPO)
    total: Counter[str] = Counter()
    print(f"{'paper':58} {'emp. now':>8} {'before':>7} {'only now':>8} {'only bef.':>9} {'cited':>6}")
    for root, paper_files in papers.items():
        counts: Counter[str] = Counter()
        shown: list[str] = []
        for file in paper_files:
            now = Counter((line, text, value) for line, text, value, emp, _ in new[file] if emp)
            before = Counter((line, text, value) for line, text, value, emp, _ in old[file] if emp)
            counts["now"] += sum(now.values())
            counts["before"] += sum(before.values())
            counts["cited"] += sum(1 for _, _, _, emp, cited in new[file] if emp and cited)
            for side, only in (("+", now - before), ("-", before - now)):
                counts["only now" if side == "+" else "only before"] += sum(only.values())
                shown.extend(f"    {side} {Path(file).name}:{line}: {text} = {value}" for line, text, value in only)
        total.update(counts)
        name = str(root.relative_to(Path(args.paths[0]))) if root.is_relative_to(Path(args.paths[0])) else str(root)
        print(
            f"{name[-58:]:58} {counts['now']:8} {counts['before']:7} {counts['only now']:8} "
            f"{counts['only before']:9} {counts['cited']:6}"
        )
        if args.show:
            print("\n".join(sorted(shown, key=lambda s: (s.split(":")[0][6:], int(s.split(":")[1])))))
    print(
        f"{'total (' + str(len(papers)) + ' papers)':58} {total['now']:8} {total['before']:7} {total['only now']:8} "
        f"{total['only before']:9} {total['cited']:6}"
    )


if __name__ == "__main__":
    main()
