"""Benchmark: derived numbers against the hand labels of real papers (issue #27), in process, one run.

    python bench/bench_derived_labels.py --set A [--set B ...] [--json OUT]

For each paper of the chosen sets (tests/bind_papers/*/labels.json; never set E, held out) a scratch
copy gets its labels' `% !patchwrite log = ...` comment and is bound in this process (`bind_root`, what
`patchwrite bind` writes); every label is judged by `bench_binder_labels.judge`, the subprocess bench's
rule (a derived operand may be an entry the labels accept as equally right, its `also`; the strict figure without
that is printed too). Per set it prints the derived labels bound right / labelled, the derived bindings that are wrong,
and the whole set's precision and coincidences (so a derived rule that binds by chance shows there).
Prints, asserts nothing; --json writes every figure and each derived label's outcome.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench_binder_labels import PAPERS, bindings_by_number, judge, metrics, mirrors
from bench_bindings import with_logs

from pytest_patchwrite.flows.bind import bind_root
from pytest_patchwrite.gates.evidence import EvidenceConfig

SETS = ("A", "B", "C", "D")  # set E is held out: never bound here


def judged(folder: Path, data: dict[str, Any], scratch: Path) -> list[dict[str, Any]]:
    """Bind one paper's scratch copy in process and return its labels, each with the judge's outcome."""
    root = with_logs(folder, data["root"], data["logs"], scratch)
    outcome = bind_root(root, EvidenceConfig(trusted=True))
    by_number = bindings_by_number(outcome.new_text, data["root"])
    seen: dict[tuple[str, int, str], int] = {}
    same = mirrors(data["numbers"])
    out = []
    for n in data["numbers"]:
        where = (n["file"], n["line"], n["token"])
        seen[where] = seen.get(where, 0) + 1
        rows = by_number.get(where, [])
        index = int(n.get("occurrence", seen[where])) - 1
        row = rows[index] if 0 <= index < len(rows) else None
        strict = judge(n, row, None)
        out.append({**n, "paper": folder.name, **judge(n, row, None, same), "strict": strict["outcome"]})
    return out


def derived_report(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the derived labels' figures and the derived bindings that are not right."""
    derived = [n for n in labels if n["label"] == "derived"]
    made = [n for n in labels if (n.get("binder") or {}).get("transform") == "derived"]
    return {
        "derived_labelled": len(derived),
        "derived_right": sum(n["outcome"] == "right" for n in derived),
        "derived_right_strict": sum(n["strict"] == "right" for n in derived),
        "derived_bindings": len(made),
        "derived_bindings_wrong": [
            {k: n.get(k) for k in ("paper", "file", "line", "token", "label", "outcome")}
            | {"formula": (n["binder"] or {}).get("formula")}
            for n in made
            if n["outcome"] != "right"
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", choices=SETS, help="a set to measure (repeatable; default all)")
    parser.add_argument("--paper", action="append", help="only these paper folders (repeatable)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sets = args.set or list(SETS)
    chosen: dict[str, list[tuple[Path, dict[str, Any]]]] = {s: [] for s in sets}
    for path in sorted(PAPERS.glob("*/labels.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("set") in chosen and (not args.paper or path.parent.name in args.paper):
            chosen[data["set"]].append((path.parent, data))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-derived-") as tmp:
        for name, papers in chosen.items():
            labels = [n for folder, data in papers for n in judged(folder, data, Path(tmp) / folder.name)]
            m, d = metrics(labels), derived_report(labels)
            strict = metrics([{**n, "outcome": n["strict"]} for n in labels])
            results[name] = {"metrics": m, "metrics_strict": strict, **d,
                             "labels": [n for n in labels if n["label"] == "derived"]}  # fmt: skip
            print(f"set {name}: derived right {d['derived_right']} / {d['derived_labelled']} labelled "
                  f"({d['derived_right_strict']} with the operands exactly the label's, no `also` mirror: precision "
                  f"{strict['precision']}); "
                  f"{d['derived_bindings']} derived binding(s), {len(d['derived_bindings_wrong'])} not right; "
                  f"set precision {m['precision']} ({m['right']}/{m['bound']}), coincidences {m['coincidences']} "
                  f"({m['none_bound']}/{m['none']}), recall {m['recall']}")  # fmt: skip
            for wrong in d["derived_bindings_wrong"]:
                print(f"  not right: {wrong['paper']} {wrong['file']}:{wrong['line']} {wrong['token']} "
                      f"({wrong['label']}, {wrong['outcome']}): {json.dumps(wrong['formula'])[:160]}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
