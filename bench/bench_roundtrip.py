"""Benchmark: the ledger's round trip on every paper we have, one run (issue #27).

    python bench/bench_roundtrip.py [--json OUT]

Papers: every tests/bind_papers/*/labels.json (its root, with the `% !patchwrite log = ...` comment of its
labels' logs added), examples/paper, and each document of the fault corpus (`corpus.documents`, English
and Chinese builds). Each is copied into a scratch directory; then, as a user runs it:

1. `bind` (fresh, no file) writes the bindings file;
2. `check`'s number lock on the unedited paper: the findings of the bindings lock (`binding_mismatch`,
   `unbound_number`, `stale_binding`; target: none) and the numbers without a decision (`unattested_number`);
3. a second `bind`: is the file byte-identical (target: yes), and does it report a conflict (target: no)?
4. the adoption path, `bind --manual unattested --reason not_logged`: the number lock's errors after it
   (target: none) and how many numbers were recorded by hand.

Prints one row per paper and the totals; asserts nothing; --json writes every figure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_patchwrite.corpus.documents import DOCUMENTS, materialize  # noqa: E402
from pytest_patchwrite.errors import PatchwriteError  # noqa: E402
from pytest_patchwrite.flows.bind import bind_root, write_bindings  # noqa: E402
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate  # noqa: E402
from pytest_patchwrite.snapshot.manuscript import load_manuscript  # noqa: E402

LOCK_KINDS = ("binding_mismatch", "unbound_number", "stale_binding")


def papers(scratch: Path) -> list[tuple[str, Path]]:
    """Return (name, root) of every paper, each copied under scratch."""
    out = []
    for labels in sorted((REPO / "tests" / "bind_papers").glob("*/labels.json")):
        data = json.loads(labels.read_text(encoding="utf-8"))
        target = scratch / f"bind_papers-{labels.parent.name}"
        shutil.copytree(labels.parent, target, ignore=shutil.ignore_patterns("*.bindings.json", "*.pdf"))
        root = target / data["root"]
        root.write_text(f"% !patchwrite log = {', '.join(data['logs'])}\n" + root.read_text(encoding="utf-8"))
        out.append((f"bind_papers/{labels.parent.name}", root))
    example = scratch / "examples-paper"
    shutil.copytree(REPO / "examples" / "paper", example, ignore=shutil.ignore_patterns("*.bindings.json", "*.pdf"))
    out.append(("examples/paper", example / "main.tex"))
    for doc_id, doc in sorted(DOCUMENTS.items()):
        for build in ("surrogate", "ctex") if doc.title_zh else ("surrogate",):
            out.append((f"corpus/{doc_id}/{build}", materialize(doc, scratch / f"corpus-{doc_id}-{build}", build)))
    return out


def _findings(root: Path, config: EvidenceConfig) -> list[Any]:
    report = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
    return list(report.numbers or [])


def measure(root: Path) -> dict[str, Any]:
    """Return the round trip's figures of one paper."""
    config = EvidenceConfig(trusted=True)
    first = bind_root(root, config)
    write_bindings(first.path, first.new_text)
    found = _findings(root, config)
    lock = [f"{Path(v.file).name}:{v.line}: {v.kind} {v.token}" for v in found if v.kind in LOCK_KINDS]
    second = bind_root(root, config)
    adopted = bind_root(root, config, manual=("unattested",), reason="not_logged")
    write_bindings(adopted.path, adopted.new_text)
    errors = [v for v in _findings(root, config) if v.severity == "error"]
    ledger = first.ledger
    assert ledger is not None and adopted.ledger is not None
    return {
        "numbers": len(first.reconciled.occurrences),
        "bound": len(ledger.covered),
        "lock_findings": lock,
        "undecided": sum(v.kind == "unattested_number" for v in found),
        "second_identical": second.new_text == first.new_text,
        "second_conflicts": second.conflicts,
        "manual": adopted.ledger.manual,
        "errors_after_adoption": [f"{Path(v.file).name}:{v.line}: {v.kind} {v.token}" for v in errors],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="patchwrite-roundtrip-") as tmp:
        for name, root in papers(Path(tmp)):
            try:
                rows[name] = measure(root)
            except PatchwriteError as exc:
                rows[name] = {"error": str(exc)}
            except Exception as exc:  # a bug of the binder or the ledger: shown, the other papers still run
                rows[name] = {"error": f"internal error: {type(exc).__name__}: {exc}"}
    print(f"{'paper':40} {'nums':>5} {'bound':>5} {'lock':>5} {'undec':>5} {'2nd=':>5} {'manual':>6} {'err':>4}")
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:40} ERROR {r['error'][:100]}")
            continue
        print(f"{name:40} {r['numbers']:5d} {r['bound']:5d} {len(r['lock_findings']):5d} {r['undecided']:5d} "
              f"{str(r['second_identical']):>5} {r['manual']:6d} {len(r['errors_after_adoption']):4d}")  # fmt: skip
        for finding in r["lock_findings"][:5]:
            print(f"    lock: {finding}")
        for finding in r["errors_after_adoption"][:5]:
            print(f"    after adoption: {finding}")
    ok = [r for r in rows.values() if "error" not in r]
    print(f"papers: {len(rows)} ({len(rows) - len(ok)} with an error)")
    print(f"round trip: {sum(not r['lock_findings'] for r in ok)} of {len(ok)} with no lock finding after a fresh "
          f"bind; {sum(r['second_identical'] and not r['second_conflicts'] for r in ok)} of {len(ok)} byte-identical "
          f"after a second bind (target: all)")  # fmt: skip
    print(
        f"adoption: {sum(not r['errors_after_adoption'] for r in ok)} of {len(ok)} green after "
        "`bind --manual unattested --reason not_logged` (target: all)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
