"""Benchmark: the binder against hand labels of real papers (issue #27), one run.

    python bench/bench_binder_labels.py [--set A|B|C|D|all] [--rows 1000000] [--json OUT]

Papers: every tests/bind_papers/*/labels.json of the chosen set. Each label is a person's reading
of one printed number, made before any binder run on the paper: the log entry it reports (`entry`,
with `also` for equally right entries), a formula over entries (`derived`), or `none` with a reason.
For each paper a scratch copy gets the `% !patchwrite log = ...` magic comment of its labels (the
root's line numbers shift by one, which the comparison undoes), then the product runs as a user
runs it: `patchwrite bind ROOT --json` (a subprocess of this tree), `patchwrite check ROOT --json`
of the unedited copy, and a second `bind`. The bindings file is read and compared with the labels:

- precision: bound to the right entry / labelled numbers bound (a `manual` decision is no binding);
- coincidences: `none` numbers bound / `none` numbers;
- recall: entry and derived labels bound to the right entry / entry and derived labels;
- per class: label kind, the reason of `none` labels, the `trap` class, doubtful labels left out;
- ambiguous (bound with alternatives) and abstained (no binding, or manual) counts;
- the round trip: findings of the bindings lock (`binding_mismatch`, `unbound_number`, `stale_binding`)
  in `check` of the freshly bound, unedited paper, and whether a second `bind` leaves the file byte-identical;
- `bind` time on a small paper beside a CSV log of --rows rows.

A binding is right when it names the label's log and locator (trivial forms normalised: a CSV row's
label in parentheses, quote style, spaces), or one of `also`; a derived label when the binding's formula
uses exactly the label's entries (each, or an entry the labels accept as equally right: its `also`), or binds its one
entry. Prints, asserts nothing; --json writes every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_bindings import big_log_paper, with_logs

REPO = Path(__file__).resolve().parent.parent
PAPERS = REPO / "tests" / "bind_papers"
LOCK_KINDS = ("binding_mismatch", "unbound_number", "stale_binding")
_ROW_LABEL = re.compile(r"^(row \d+) \(.*?\)(?=, column )")  # a label may hold parentheses: (model=gpt-5.5 (medium))
_REASON = re.compile(r"[a-z_]+")
SETS = ("A", "B", "C", "D", "E")  # A: development; B to E: held out (tests/bind_papers/README.md)


TIMEOUT: list[str] = []  # `--timeout S` for bind and check (--timeout); empty: the product's default


def patchwrite(args: list[str], cwd: Path, timeout: float = 900) -> tuple[int, str, str, float]:
    """Run `patchwrite ARGS` from this tree in a subprocess; return (exit code, stdout, stderr, seconds)."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main(sys.argv[1:]))"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - started


def norm_log(log: str) -> str:
    return posixpath.normpath(log.replace("\\", "/"))


def norm_at(at: str) -> str:
    at = _ROW_LABEL.sub(r"\1", at.strip())
    return re.sub(r"\s*,\s*", ", ", at.replace("'", '"'))


def key(log: str, at: str) -> tuple[str, str]:
    return norm_log(log), norm_at(at)


def in_folder(row: dict[str, Any], base: str) -> dict[str, Any]:
    """Return a row of the product's output with its paths (relative to the root's directory `base`) made relative
    to the paper's folder, as the labels write them: `section6.tex`, `../results/t.csv` -> `paper/section6.tex`,
    `results/t.csv`."""
    if not base:
        return row
    row = dict(row)
    for name in ("file", "log"):
        if isinstance(row.get(name), str):
            row[name] = norm_log(posixpath.join(base, row[name]))
    formula = row.get("formula")
    if isinstance(formula, dict) and isinstance(formula.get("operands"), list):
        row["formula"] = dict(formula, operands=[in_folder(o, base) if isinstance(o, dict) else o
                                                 for o in formula["operands"]])  # fmt: skip
    return row


def bindings_by_number(text: str, root_name: str) -> dict[tuple[str, int, str], list[dict[str, Any]]]:
    """Return the bindings file's rows by (file, line in the vendored file, token); paths as the labels write them."""
    out: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    base = posixpath.dirname(root_name)
    for row in json.loads(text).get("bindings", []):
        row = in_folder(row, base)
        line = row["line"] - (1 if row["file"] == root_name else 0)
        out.setdefault((row["file"], line, row["token"]), []).append(row)
    return out


def reported(output: dict[str, Any], root_name: str) -> dict[tuple[str, int, str], str]:
    """Return which list of `bind --json` (other than bindings) names each number: unattested, ambiguous, ..."""
    out = {}
    base = posixpath.dirname(root_name)
    for name, items in output.items():
        if name == "bindings" or not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, dict) and {"file", "line", "token"} <= set(item):
                item = in_folder(item, base)
                line = item["line"] - (1 if item["file"] == root_name else 0)
                out[(item["file"], line, item["token"])] = name
    return out


def operands(row: dict[str, Any]) -> set[tuple[str, str]]:
    formula = row.get("formula") or {}
    return {key(o["log"], o["at"]) for o in formula.get("operands", []) if "log" in o and "at" in o}


def mirrors(numbers: list[dict[str, Any]]) -> dict[tuple[str, str], frozenset[tuple[str, str]]]:
    """Return, for each entry an entry label names, the entries a person accepts as equally right (its `also`)."""
    out: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
    for n in numbers:
        if n["label"] == "entry" and n.get("also"):
            same = frozenset({key(n["log"], n["at"])} | {key(a["log"], a["at"]) for a in n["also"]})
            for k in same:
                out[k] = out.get(k, frozenset()) | same
    return out


def judge(
    label: dict[str, Any],
    row: dict[str, Any] | None,
    listed: str | None,
    same: dict[tuple[str, str], frozenset[tuple[str, str]]] | None = None,
) -> dict[str, Any]:
    """Return the outcome of one label against the binder's decision for its number (`row`: None when none).

    `same` (from `mirrors`): a derived binding whose operand is an entry the labels accept as equally right as the
    label's operand (`also`: the same quantity in two logs) is right too."""
    # a number in no list of the binder's output: not empirical under the policy, or not read by the scanner
    out: dict[str, Any] = {"binder": None, "listed": listed or ("not_considered" if row is None else None)}
    if row is None or row.get("transform") == "manual":
        out["outcome"] = "manual" if row else "unbound"
        return out
    out["binder"] = {k: row.get(k) for k in ("log", "at", "value", "transform", "formula")}
    out["ambiguous"] = bool(row.get("alternatives"))
    if label["label"] == "none":
        out["outcome"] = "bound"
        return out
    derived = row.get("transform") == "derived"
    got = operands(row) if derived else {key(row["log"], row["at"])}
    if label["label"] == "entry":
        right = {key(label["log"], label["at"])} | {key(a["log"], a["at"]) for a in label.get("also", [])}
        ok = not derived and got <= right
    else:
        wanted = {key(e["log"], e["at"]) for e in label["entries"]}
        same = same or {}
        ok = (
            bool(wanted)
            and len(got) == len(wanted)
            and all(any(g == w or g in same.get(w, ()) for g in got) for w in wanted)
        )
    out["outcome"] = "right" if ok else "wrong"
    return out


def measure_paper(folder: Path, data: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """Bind one paper's scratch copy, judge every label, and take its round trip."""
    root = with_logs(folder, data["root"], data["logs"], scratch)
    rc, stdout, stderr, seconds = patchwrite(["bind", str(root), "--json", *TIMEOUT], scratch)
    result: dict[str, Any] = {"paper": folder.name, "set": data["set"], "bind_exit": rc}
    result["bind_seconds"] = round(seconds, 2)
    bindings_file = root.with_name(root.stem + ".bindings.json")
    if rc not in (0, 1) or not bindings_file.is_file():
        result["error"] = (stderr or stdout).strip().splitlines()[-1:] or ["no bindings file"]
        result["labels"] = [dict(n, outcome="error") for n in data["numbers"]]
        return result
    try:
        output = json.loads(stdout)
    except json.JSONDecodeError:
        output = {}
    result["counts"] = output.get("counts")
    first = bindings_file.read_bytes()
    by_number = bindings_by_number(first.decode("utf-8"), data["root"])
    listed = reported(output, data["root"])
    result["labels"] = []
    same = mirrors(data["numbers"])
    seen: Counter[tuple[str, int, str]] = Counter()
    for n in data["numbers"]:
        where = (n["file"], n["line"], n["token"])
        seen[where] += 1
        rows = by_number.get(where, [])
        index = int(n.get("occurrence", seen[where])) - 1  # the k-th such token of the line, in reading order
        row = rows[index] if 0 <= index < len(rows) else None
        result["labels"].append({**n, **judge(n, row, listed.get(where), same)})
    result["round_trip"] = round_trip(root, scratch, first)
    return result


def round_trip(root: Path, scratch: Path, first: bytes) -> dict[str, Any]:
    """Check the freshly bound, unedited paper; bind again; say what the lock found and whether the file held."""
    rc, stdout, stderr, seconds = patchwrite(["check", str(root), "--json", "--no-cache", *TIMEOUT], scratch)
    kinds: Counter[str] = Counter()
    examples: list[str] = []  # the first few lock findings as check words them, to say what went wrong
    try:
        for manuscript in json.loads(stdout).get("manuscripts", []):
            for violation in manuscript.get("gates", {}).get("numbers", {}).get("violations", []):
                if violation.get("kind") in LOCK_KINDS:
                    kinds[violation["kind"]] += 1
                    if len(examples) < 8:
                        examples.append(f"{violation.get('file')}:{violation.get('line')}: "
                                        f"{violation.get('severity')}: {violation.get('message')}")  # fmt: skip
        check_error = None
    except json.JSONDecodeError:
        check_error = (stderr or stdout).strip().splitlines()[-1:] or ["no output"]
    bindings_file = root.with_name(root.stem + ".bindings.json")
    rc2, _, _, _ = patchwrite(["bind", str(root), *TIMEOUT], scratch)
    second = bindings_file.read_bytes() if bindings_file.is_file() else b""
    return {"check_exit": rc, "check_seconds": round(seconds, 1), "check_error": check_error,
            "lock_findings": dict(kinds), "lock_examples": examples, "second_bind_exit": rc2,
            "second_bind_identical": second == first}  # fmt: skip


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def metrics(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """Return precision, coincidences, recall and the counts of a list of judged labels."""
    bound = [n for n in labels if n["outcome"] in ("right", "wrong", "bound")]
    right = sum(n["outcome"] == "right" for n in labels)
    entries = [n for n in labels if n["label"] in ("entry", "derived")]
    nones = [n for n in labels if n["label"] == "none"]
    coincident = sum(n["outcome"] == "bound" for n in nones)
    return {
        "labels": len(labels), "bound": len(bound), "right": right,
        "precision": share(right, len(bound)),
        "none": len(nones), "none_bound": coincident, "coincidences": share(coincident, len(nones)),
        "entry_or_derived": len(entries), "recall": share(right, len(entries)),
        "ambiguous": sum(bool(n.get("ambiguous")) for n in labels),
        "abstained": sum(n["outcome"] in ("unbound", "manual") for n in labels),
        "manual": sum(n["outcome"] == "manual" for n in labels),
        "errors": sum(n["outcome"] == "error" for n in labels),
    }  # fmt: skip


def classes(labels: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Return the metrics per class: label kind, reason of none labels, trap, doubtful or not."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for n in labels:
        names = [f"label={n['label']}", f"doubtful={bool(n.get('doubtful'))}"]
        if n["label"] == "none":
            names.append("reason=" + (_REASON.match(n.get("reason", "")) or _REASON.match("other")).group(0))
        if n.get("trap"):
            names.append(f"trap={n['trap']}")
        if n.get("listed"):
            names.append(f"listed={n['listed']}")
        for name in names:
            groups.setdefault(name, []).append(n)
    return {name: metrics(members) for name, members in sorted(groups.items())}


def big_log_seconds(rows: int, scratch: Path) -> dict[str, Any]:
    """Return the wall seconds of `patchwrite bind` on a small paper beside a CSV log of `rows` rows."""
    root = big_log_paper(rows, scratch)
    rc, _, stderr, seconds = patchwrite(["bind", str(root)], root.parent)
    return {"rows": rows, "exit": rc, "seconds": round(seconds, 2), "error": stderr.strip()[-200:] if rc else None}


def report(name: str, m: dict[str, Any]) -> str:
    def f(x: float | None) -> str:
        return "  -  " if x is None else f"{x:.3f}"

    return (f"{name:34} {m['labels']:5} {m['bound']:5} {f(m['precision']):>6} {m['none_bound']:3}/{m['none']:<3} "
            f"{f(m['coincidences']):>6} {m['right']:3}/{m['entry_or_derived']:<3} {f(m['recall']):>6} "
            f"{m['ambiguous']:4} {m['abstained']:5}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=(*SETS, "all"), default="all")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the big CSV log (0: skip)")
    parser.add_argument("--papers", type=Path, default=PAPERS)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=None,
                        help="pass --timeout S to bind and check (default: the product's own, 60 s)")  # fmt: skip
    args = parser.parse_args()
    if args.timeout:
        TIMEOUT[:] = ["--timeout", f"{args.timeout:g}"]
    chosen = []
    for path in sorted(args.papers.glob("*/labels.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if args.set in ("all", data.get("set")):
            chosen.append((path.parent, data))
    with tempfile.TemporaryDirectory(prefix="bench-labels-") as tmp:
        papers = [measure_paper(folder, data, Path(tmp) / folder.name) for folder, data in chosen]
        big = big_log_seconds(args.rows, Path(tmp)) if args.rows else None
    every = [n for p in papers for n in p["labels"]]
    summary = {"all": metrics(every)}
    for s in sorted({p["set"] for p in papers}):
        summary[f"set {s}"] = metrics([n for p in papers if p["set"] == s for n in p["labels"]])
    print(f"{'paper / class':34} {'nums':>5} {'bound':>5} {'prec':>6} {'none b/n':>7} {'coinc':>6} {'recall':>14} "
          f"{'amb':>4} {'abst':>5}")  # fmt: skip
    for p in papers:
        error = f"  ERROR {p['error']}" if "error" in p else ""
        print(report(f"{p['paper']} ({p['set']})", metrics(p["labels"])) + error)
    for name, m in summary.items():
        print(report(name, m))
    print("per class (all sets):")
    per_class = classes(every)
    for name, m in per_class.items():
        print(report("  " + name, m))
    print(f"{'paper':16} {'bind':>5} {'check':>5} {'lock findings':30} {'2nd bind identical':>18}")
    for p in papers:
        trip = p.get("round_trip") or {}
        print(f"{p['paper']:16} {p['bind_exit']:5} {trip.get('check_exit', '-')!s:>5} "
              f"{json.dumps(trip.get('lock_findings', {})):30} {trip.get('second_bind_identical', '-')!s:>18}"
              + (f"  check error: {trip['check_error']}" if trip.get("check_error") else ""))  # fmt: skip
    trips = [p["round_trip"] for p in papers if p.get("round_trip")]
    clean = sum(1 for r in trips if not r["lock_findings"])
    held = sum(1 for r in trips if not set(r["lock_findings"]) & {"binding_mismatch", "stale_binding"})
    same = sum(1 for r in trips if r["second_bind_identical"])
    print(f"round trip: {clean} of {len(papers)} papers with no lock finding after a fresh bind "
          f"({held} with no binding_mismatch or stale_binding; unbound_number there is a number left without a "
          f"decision); {same} of {len(papers)} byte-identical after a second bind (target: all)")  # fmt: skip
    if big:
        print(f"bind with a {big['rows']:,}-row CSV log: {big['seconds']:.2f} s wall, exit {big['exit']} "
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; target <= 10 s)")  # fmt: skip
    print("targets: precision >= 0.95, coincidences <= 0.05, recall >= 0.8")
    if args.json:
        out = {"set": args.set, "summary": summary, "per_class": per_class, "papers": papers, "big_log": big}
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
