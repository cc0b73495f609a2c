"""Benchmark: `patchwrite check` against latexmk on real papers, one run each.

    python bench/real_papers.py [DIR_OR_ROOT ...] [--texlive N] [--json OUT]

Papers: the given roots (a `.tex` with `\\documentclass`) or directories (every root in them),
else tests/real_world/ plus the first N biblatex examples TeX Live ships (--texlive, default 8).
Each paper is copied twice into a scratch directory: latexmk builds one copy (`-pdf`, or
`-pdfxe`/`-pdflua` when the paper names that engine), `patchwrite check --json --no-cache` checks
the other. latexmk runs unconfined: give it only papers you trust (TeX Live's own samples are).

Prints per paper: latexmk's verdict (clean = exit 0 and no undefined citation or reference),
patchwrite's compile verdict, its failing items, its warnings, both times; then compile
agreement, failing items on the papers latexmk builds cleanly (target 0), warnings per paper,
and the time ratio patchwrite/latexmk.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "real_world"
BIBLATEX_EXAMPLES = Path("/usr/share/doc/texlive-doc/latex/biblatex/examples")
_UNDEFINED = re.compile(r"There were undefined (?:references|citations)|Citation .* undefined|Reference .* undefined")
_PROGRAM = re.compile(r"^%\s*!\s*TEX\s+(?:TS-)?program\s*=\s*(\w+)", re.IGNORECASE | re.MULTILINE)
LATEXMK_MODE = {"xelatex": "-pdfxe", "lualatex": "-pdflua"}


def is_root(path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return "\\documentclass" in text.split("\\begin{document}", 1)[0]


def texlive_samples(limit: int, scratch: Path) -> list[Path]:
    """Return up to `limit` biblatex example roots, unpacked into `scratch` (some ship gzipped)."""
    if not BIBLATEX_EXAMPLES.is_dir():
        return []
    roots = []
    for source in sorted(BIBLATEX_EXAMPLES.glob("*.tex*"))[: limit * 2]:
        name = source.name.removesuffix(".gz")
        target = scratch / "texlive" / Path(name).stem / name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
        target.write_bytes(data)
        if is_root(target):
            roots.append(target)
        if len(roots) == limit:
            break
    return roots


def papers(args: argparse.Namespace, scratch: Path) -> list[tuple[Path, Path]]:
    """Return (tree to copy, root) per paper: a directory is a tree whose roots sit at its top or one level down."""
    found: list[tuple[Path, Path]] = []
    for item in map(Path, args.papers):
        item = item.resolve()
        if item.is_dir():
            candidates = sorted(item.glob("*.tex")) + sorted(item.glob("*/*.tex"))
            found.extend((item, p) for p in candidates if is_root(p))
        elif is_root(item):
            found.append((item.parent, item))
    if not args.papers:
        found = [(p.parent, p) for p in sorted(SAMPLES.glob("*.tex")) + texlive_samples(args.texlive, scratch)]
    return found


def fresh_copy(tree: Path, root: Path, target: Path) -> Path:
    """Copy the paper's tree (without build outputs; a `.git` marker stays) and return the copy's root."""
    outputs = shutil.ignore_patterns("*.aux", "*.log", "*.bbl", "*.blg", "*.bcf", "*.run.xml", "*.fls",
                                     "*.fdb_latexmk", "*.toc", "*.out", "*.xdv", "objects", "*.pack")  # fmt: skip

    def ignore(directory: str, names: list[str]) -> set[str]:
        # a PDF is a build output only beside a .tex of its name: figures (figures/figure_1.pdf) stay
        built = {n for n in names if n.endswith(".pdf") and f"{n[:-4]}.tex" in names}
        return set(outputs(directory, names)) | built

    shutil.copytree(tree, target, ignore=ignore)
    return target / root.relative_to(tree)


def run_latexmk(root: Path) -> tuple[bool, bool, float]:
    """Return (exit 0, clean: exit 0 and nothing undefined, seconds).

    The engine is the one the paper needs as patchwrite infers it (`% !TEX program`, a latexmkrc's
    `$pdf_mode`, a local class loading fontspec: ReScience C's Makefile runs xelatex), so latexmk is
    not failed for running pdflatex on a xelatex paper.
    """
    text = root.read_text(encoding="utf-8", errors="replace")
    program = _PROGRAM.search(text)
    engine = program.group(1).lower() if program else None
    if engine is None:
        sys.path.insert(0, str(REPO))
        from pytest_patchwrite.snapshot.engines import engine_and_reason

        engine = engine_and_reason(root, text)[0]
    mode = LATEXMK_MODE.get(engine or "", "-pdf")
    started = time.perf_counter()
    done = subprocess.run(["latexmk", mode, "-interaction=nonstopmode", "-halt-on-error", root.name], cwd=root.parent,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=900)  # fmt: skip
    seconds = time.perf_counter() - started
    log = root.with_suffix(".log")
    undefined = bool(_UNDEFINED.search(log.read_text(encoding="utf-8", errors="replace"))) if log.exists() else True
    return done.returncode == 0, done.returncode == 0 and not undefined, seconds


def run_patchwrite(root: Path, timeout: float = 600) -> tuple[dict, float]:
    """Return (the manuscript's `check --json` entry, seconds)."""
    started = time.perf_counter()
    cli = [sys.executable, "-m", "pytest_patchwrite.cli"]
    cmd = [*cli, "check", "--json", "--no-cache", "--timeout", f"{timeout:g}", root.name]
    done = subprocess.run(cmd, cwd=root.parent, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    try:
        return json.loads(done.stdout)["manuscripts"][0], seconds
    except (ValueError, KeyError, IndexError):
        return {
            "gates": {"compile": {"ok": False, "violations": [{"kind": "crash", "message": done.stderr[-300:]}]}}
        }, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("papers", nargs="*", help="paper roots or directories (default: the sample set)")
    parser.add_argument("--texlive", type=int, default=8, help="biblatex examples from TeX Live to add (default 8)")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--timeout", type=float, default=600, help="patchwrite's --timeout per paper (default 600)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="real-papers-") as tmp:
        scratch = Path(tmp)
        for n, (tree, root) in enumerate(papers(args, scratch)):
            name = str(root.relative_to(tree.parent))
            built, clean, lmk_seconds = run_latexmk(fresh_copy(tree, root, scratch / f"{n}-latexmk"))
            entry, pw_seconds = run_patchwrite(fresh_copy(tree, root, scratch / f"{n}-patchwrite"), args.timeout)
            gates = entry["gates"]
            if "compile" not in gates:  # an environment error (exit 2): no verdict, shown as its own outcome
                reason = entry.get("error", {}).get("reason", "environment")
                gates = {"compile": {"ok": False, "violations": [{"kind": f"environment:{reason}"}]}}
            failing = sorted(name for name, gate in gates.items() if not gate["ok"])
            warnings = sum(v.get("severity") == "warning" for gate in gates.values() for v in gate["violations"])
            kinds = sorted({v["kind"] for gate in gates.values() for v in gate["violations"]})
            row = {"paper": name, "latexmk_ok": built, "latexmk_clean": clean,
                   "compile_ok": gates["compile"]["ok"], "failing": failing, "warnings": warnings, "kinds": kinds,
                   "latexmk_s": round(lmk_seconds, 2), "patchwrite_s": round(pw_seconds, 2)}  # fmt: skip
            rows.append(row)
            verdict = "clean" if clean else "ok" if built else "FAIL"
            print(f"{name[-48:]:48} latexmk {verdict:5} compile {'ok' if row['compile_ok'] else 'FAIL':4} "
                  f"failing {','.join(failing) or '-':24} warnings {warnings} {' '.join(kinds)}  "
                  f"{lmk_seconds:6.2f} s / {pw_seconds:6.2f} s", flush=True)  # fmt: skip
    if not rows:
        sys.exit("no papers found")
    agree = sum(r["latexmk_ok"] == r["compile_ok"] for r in rows)
    clean = [r for r in rows if r["latexmk_clean"]]
    false_alarms = sum(len(r["failing"]) for r in clean)
    lmk, pw = sum(r["latexmk_s"] for r in rows), sum(r["patchwrite_s"] for r in rows)
    print(f"papers: {len(rows)}; compile agreement with latexmk: {agree}/{len(rows)}")
    print(f"failing items on the {len(clean)} papers latexmk builds cleanly: {false_alarms} (target 0)")
    print(f"warnings per paper: {sum(r['warnings'] for r in rows) / len(rows):.2f}")
    print(f"time: latexmk {lmk:.1f} s, patchwrite check {pw:.1f} s; patchwrite/latexmk = {pw / lmk:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
