"""Measure: false alarms of the evidence locks on sample papers that TeX Live ships.

    apt-get install texlive-publishers-doc
    python bench/false_alarms.py [--show]

Each sample is unpacked with the `.bib` files beside it; its experimental log
lists every number its tables report, read with a deliberately simple regex over
`tabular` bodies (independent of our scanner). Everything the default policy
then reports is counted, by kind. Samples that cite keys their `.bib` lacks are
real findings, not false alarms: --show prints each violation to judge.
"""

from __future__ import annotations

import argparse
import gzip
import re
import tempfile
from collections import Counter
from pathlib import Path

from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate
from pytest_patchwrite.snapshot.manuscript import load_manuscript

DOCS = Path("/usr/share/doc/texlive-doc/latex")
SAMPLES = [
    *sorted((DOCS / "ieeetran").glob("bare_*.tex.gz")),
    *sorted((DOCS / "elsarticle").glob("*.tex.gz")),
    *sorted((DOCS / "acmart" / "samples").glob("sample-*.tex.gz")),
]
_TABULAR = re.compile(r"\\begin\{tabular\*?\}(.*?)\\end\{tabular\*?\}", re.DOTALL)
_NUM = re.compile(r"\d+(?:\.\d+)?")


def unpack(src: Path, dst: Path) -> None:
    data = gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes()
    (dst / src.name.removesuffix(".gz")).write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show", action="store_true", help="print every violation")
    args = parser.parse_args()
    if not SAMPLES:
        raise SystemExit("no samples found: apt-get install texlive-publishers-doc")
    total: Counter[str] = Counter()
    print(f"{'sample':42} {'table numbers':>13} {'numbers':>8} {'cites':>6} {'placeholders':>12} {'all-policy':>10}")
    for sample in SAMPLES:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for bib in sample.parent.glob("*.bib*"):
                unpack(bib, work)
            unpack(sample, work)
            root = work / sample.name.removesuffix(".gz")
            text = root.read_text(encoding="utf-8", errors="replace")
            root.write_text(text, encoding="utf-8")
            tables = [n for body in _TABULAR.findall(re.sub(r"(?<!\\)%.*", "", text)) for n in _NUM.findall(body)]
            (work / "tables.txt").write_text("\n".join(tables) + "\n")
            config = EvidenceConfig(logs=["tables.txt"])
            report = evaluate(load_manuscript(root), config)
            counts = {"numbers": len(report.numbers or []), "cites": len(report.citations),
                      "placeholders": len(report.placeholders)}  # fmt: skip
            strict_all = evaluate(load_manuscript(root), EvidenceConfig(logs=["tables.txt"], numbers="all"))
            counts["all-policy"] = len(strict_all.numbers or [])
            total.update(counts)
            print(
                f"{sample.name:42} {len(tables):13} {counts['numbers']:8} {counts['cites']:6} "
                f"{counts['placeholders']:12} {counts['all-policy']:10}"
            )
            if args.show:
                for v in [*(report.numbers or []), *report.citations, *report.placeholders]:
                    print(f"    {Path(v.file).name}:{v.line}: {v.kind} {v.token}")
    print(
        f"{'total':42} {'':13} {total['numbers']:8} {total['cites']:6} {total['placeholders']:12} "
        f"{total['all-policy']:10}"
    )


if __name__ == "__main__":
    main()
