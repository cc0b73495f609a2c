"""The action's main step: `patchwrite check` and `patchwrite diff` on the pull request's manuscripts, then
annotations, the step summary, SARIF and the step's outputs, from the JSON they print.

Runs with the package installed from the action's own directory; it imports nothing from the checkout (run it
with `python -I`, so the working directory is not on sys.path) and starts no process of the pull request's: the
engines run inside patchwrite's sandbox. Inputs come from the environment (set by action.yml, never pasted into
a shell line):

  PATCHWRITE_PAPER          a root .tex, a section file, or a directory searched for root manuscripts
  PATCHWRITE_BASE           the git revision to diff against (default: origin/$GITHUB_BASE_REF on a pull request)
  PATCHWRITE_EVIDENCE_FROM  passed to `diff --evidence-from` when set
  PATCHWRITE_PAGES          "true": changed pages (`diff --pages`) when this patchwrite has them
  PATCHWRITE_SARIF          "true" (default) or "false"
  PATCHWRITE_UPLOAD_SARIF   "auto" (default: upload unless the pull request comes from a fork), "true", "false"
  PATCHWRITE_OUT            directory for the report, the SARIF and the pages (default $RUNNER_TEMP/patchwrite)

`python run.py link URL` appends the uploaded artifact's link to the step summary.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from pytest_patchwrite import cli
from pytest_patchwrite.commands.sarif import repository_root, write_sarif
from pytest_patchwrite.errors import InputError, NotRegularFile
from pytest_patchwrite.files.inputs import read_prefix
from pytest_patchwrite.model import display_path
from pytest_patchwrite.plugin import stepsummary
from pytest_patchwrite.tex.texinputs import is_root

MAX_ROOTS = 50


def _say(line: str) -> None:
    print(line, flush=True)


def _true(name: str, default: str) -> bool:
    value = os.environ.get(name, "").strip().lower() or default
    if value not in ("true", "false"):
        raise InputError(name, f"{value!r}: use true or false")
    return value == "true"


def find_roots(paper: Path) -> list[Path]:
    """Return the root manuscripts `paper` names: itself (a file), or the roots found below it (a directory)."""
    if not paper.is_dir():
        return [paper]
    roots = []
    for directory, subdirs, files in os.walk(paper):  # symlinked directories are not followed
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(directory) / name
            if not name.endswith(".tex") or path.is_symlink():
                continue
            try:
                head = read_prefix(path, 200_000).decode("utf-8", errors="replace")
            except (NotRegularFile, InputError):
                continue
            if is_root(head):
                roots.append(path)
    if not roots:
        raise InputError(paper, "holds no root manuscript (a .tex with \\documentclass)")
    if len(roots) > MAX_ROOTS:
        raise InputError(paper, f"holds {len(roots)} root manuscripts; name at most {MAX_ROOTS} (a file or a folder)")
    return roots


def _patchwrite(*argv: str) -> tuple[int, dict[str, Any] | None]:
    """Return the exit code and the JSON object of one patchwrite command, run in this process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    sys.stderr.write(err.getvalue())
    if code >= 2:  # no verdict: the one-line reason becomes the step's error annotation
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        problem = lines[0] if lines else f"patchwrite {argv[0]} exited {code}"
        _say(stepsummary.annotation({"message": f"{problem} (exit {code}: no verdict)"}, Path.cwd()))
    try:
        return code, json.loads(out.getvalue())
    except ValueError:
        return code, None


def _diff_options() -> set[str]:
    parser = cli.build_parser()
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        diff = getattr(action, "choices", {}).get("diff")
        if diff is not None:
            return {s for a in diff._actions for s in a.option_strings}
    return set()


def _base() -> str | None:
    base = os.environ.get("PATCHWRITE_BASE", "").strip()
    if not base and os.environ.get("GITHUB_BASE_REF"):
        base = f"origin/{os.environ['GITHUB_BASE_REF']}"
    if base and (base.startswith("-") or not re.fullmatch(r"[\w./@^~{}:+-]+", base)):
        raise InputError("base", f"{base!r} is not a git revision")
    return base or None


def is_fork() -> bool:
    """Return whether this run is for a pull request whose head lives in another repository (read-only token)."""
    try:
        event = json.loads(Path(os.environ.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    head = ((event.get("pull_request") or {}).get("head") or {}).get("repo") or {}
    return bool(head) and head.get("full_name") != os.environ.get("GITHUB_REPOSITORY")


def _outcomes(gates: dict[str, Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for gate, result in gates.items():
        if "skipped" in result:
            out[gate] = ("skipped", str(result["skipped"]))
        else:
            out[gate] = ("passed" if result.get("ok") else "failed", "")
    return out


def _change_lines(root: str, diff: dict[str, Any], base: str, cwd: Path) -> list[str]:
    changes = diff.get("changes", [])
    if not changes:
        return []
    shown = stepsummary.cell(display_path(str(Path(root).resolve()), cwd))
    lines = ["", f"Changes of {shown} against {stepsummary.cell(base)}:", ""]
    for c in changes[: stepsummary.MAX_ROWS]:
        where = stepsummary.cell(f"{display_path(c['file'], cwd)}:{c['line']}")
        lines.append(f"- {where}: {stepsummary.cell(c['message'])}")
    if len(changes) > stepsummary.MAX_ROWS:
        lines.append(f"- … and {len(changes) - stepsummary.MAX_ROWS} more")
    return lines


def _pages_lines(root: str, diff: dict[str, Any], index: int, cwd: Path) -> list[str]:
    """Return the step summary's table of the pages `diff --pages` drew for one manuscript ([] without pages)."""
    pages = diff.get("pages")
    if not isinstance(pages, dict):
        return []
    shown = stepsummary.cell(display_path(str(Path(root).resolve()), cwd))
    lines = ["", f"Changed pages of {shown} (`pages/{index}/index.html` in the artifact):", ""]
    if pages.get("note"):
        return [*lines, stepsummary.cell(str(pages["note"]))]
    changed = pages.get("changed", [])
    if changed:
        lines += ["| Page | Base page | Changed regions | Numbers and keys moved there |", "|---|---|---|---|"]
        for page in changed[: stepsummary.MAX_ROWS]:
            moved = "; ".join(stepsummary.cell(str(c.get("message", ""))) for c in page.get("changes", [])) or "-"
            now = page.get("page") or "removed"
            was = page.get("base_page") or "added"
            lines.append(f"| {now} | {was} | {int(page.get('boxes', 0))} | {moved} |")
        if len(changed) > stepsummary.MAX_ROWS:
            lines.append(f"\n… and {len(changed) - stepsummary.MAX_ROWS} more changed pages")
        lines.append("")
    left = len(pages.get("left_out", []))
    lines.append(f"{len(changed)} changed page(s) drawn, {int(pages.get('unchanged', 0))} unchanged (counted, not "
                 f"drawn)" + (f", {left} not drawn (see index.html)" if left else "") + ".")  # fmt: skip
    return lines


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def run() -> int:
    """Return the step's exit code after checking, diffing and writing every output."""
    cwd = Path.cwd()
    out_dir = Path(os.environ.get("PATCHWRITE_OUT") or Path(os.environ.get("RUNNER_TEMP", cwd)) / "patchwrite")
    out_dir.mkdir(parents=True, exist_ok=True)
    paper = os.environ.get("PATCHWRITE_PAPER", "").strip()
    if not paper:
        raise InputError("paper", "the action needs the `paper` input: a root .tex or a folder")
    roots = find_roots(Path(paper))
    want_sarif = _true("PATCHWRITE_SARIF", "true")
    want_pages = _true("PATCHWRITE_PAGES", "false")
    upload = os.environ.get("PATCHWRITE_UPLOAD_SARIF", "auto").strip().lower() or "auto"
    if upload not in ("auto", "true", "false"):
        raise InputError("upload-sarif", f"{upload!r}: use auto, true or false")
    base = _base()

    code, report = _patchwrite("check", *map(str, roots), "--json")
    worst = code
    manuscripts = (report or {}).get("manuscripts", [])
    (out_dir / "report.json").write_text(json.dumps(report or {"error": f"check exited {code}"}, indent=2) + "\n")
    diffs: dict[str, dict[str, Any]] = {}
    options = _diff_options()
    extra: list[str] = []
    if os.environ.get("PATCHWRITE_EVIDENCE_FROM", "").strip():
        if "--evidence-from" not in options:
            raise InputError("evidence-from", "this version of patchwrite has no `diff --evidence-from`")
        extra += ["--evidence-from", os.environ["PATCHWRITE_EVIDENCE_FROM"].strip()]
    pages = None
    if want_pages and "--pages" in options:
        pages = out_dir / "pages"
    elif want_pages:
        _say("::warning::pages: this version of patchwrite has no `diff --pages`; no pages rendered")
    if base is not None and worst < 2:
        for index, root in enumerate(roots):
            pages_args = ["--pages", str(pages / str(index))] if pages is not None else []
            code, diff = _patchwrite("diff", str(root), "--base", base, "--json", *extra, *pages_args)
            worst = max(worst, code)  # the worse wins: 3 internal > 2 input/environment > 1 failed > 0
            if diff is not None:
                diffs[str(root)] = diff
        (out_dir / "diff.json").write_text(json.dumps(list(diffs.values()), indent=2) + "\n")

    violations = [v for m in manuscripts for g in m["gates"].values() for v in g["violations"]]
    violations += [v for d in diffs.values() for v in d.get("violations", [])]
    # the diff item repeats what the locks found on the lines it changed
    violations = list({json.dumps(v, sort_keys=True): v for v in violations}.values())
    for line in dict.fromkeys(stepsummary.annotation(v, cwd) for v in violations):
        _say(line)

    sarif_file = out_dir / "patchwrite.sarif"
    if want_sarif:
        files = [str(cwd / v["file"]) for v in violations if v.get("file")] + [str(r.resolve()) for r in roots]
        top = repository_root(files, cwd)
        found = [dict(v, file=str(cwd / v["file"])) if v.get("file") else v for v in violations]
        if not write_sarif(sarif_file, found, top):
            raise InputError(sarif_file, "cannot write the SARIF file")
    fork = is_fork()
    # without a verdict (exit 2 or 3) the SARIF holds nothing; uploading it would close the open alerts as fixed
    uploading = want_sarif and worst < 2 and (upload == "true" or (upload == "auto" and not fork))

    outcomes = {m["path"]: _outcomes(m["gates"]) for m in manuscripts}
    verdicts = {m["path"]: {g: {"result": r} for g, r in m["gates"].items()} for m in manuscripts}
    for root, diff in diffs.items():
        path = next((m["path"] for m in manuscripts if Path(m["path"]).resolve() == Path(root).resolve()), root)
        outcomes.setdefault(path, {})["diff"] = ("passed" if diff.get("ok") else "failed", "")
        verdicts.setdefault(path, {})["diff"] = {"result": diff}
    summary = stepsummary.render(outcomes, verdicts, cwd) if outcomes else "## patchwrite\n\nNo verdict.\n"
    for root, diff in diffs.items():
        summary += "\n".join(_change_lines(root, diff, base or "", cwd)) + ("\n" if diff.get("changes") else "")
    for index, root in enumerate(roots):
        if str(root) in diffs and (table := _pages_lines(str(root), diffs[str(root)], index, cwd)):
            summary += "\n".join(table) + "\n"
    if want_sarif:
        where = (
            "uploaded to code scanning"
            if uploading
            else f"not uploaded: no verdict (exit {worst})"
            if worst >= 2
            else "kept as an artifact (a fork's token cannot upload it)"
            if fork
            else "kept as an artifact (upload-sarif: false)"
        )
        summary += f"\nSARIF: {len(violations)} result(s), {where}.\n"
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), summary)

    outputs = {
        "dir": str(out_dir),
        "sarif": str(sarif_file) if want_sarif else "",
        "upload-sarif": "true" if uploading else "false",
        "fork": "true" if fork else "false",
        "pages": str(pages) if pages is not None and pages.exists() else "",
        "exit-code": str(worst),
    }
    _append(os.environ.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in outputs.items()))
    return worst


def link(url: str) -> int:
    """Return 0 after appending the artifact's link to the step summary."""
    if not re.fullmatch(r"https://[\w.-]+/[\w./%-]+", url):
        raise InputError("artifact-url", f"{url!r} is not an artifact URL")
    _append(os.environ.get("GITHUB_STEP_SUMMARY"), f"\nReport, SARIF and pages: [the patchwrite artifact]({url})\n")
    return 0


def main(argv: list[str]) -> int:
    """Return the step's exit code; an input problem is one `::error::` line and exit 2."""
    try:
        if argv[:1] == ["link"]:
            return link(argv[1] if len(argv) > 1 else "")
        return run()
    except InputError as exc:
        _say(stepsummary.annotation({"message": str(exc)}, Path.cwd()))
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
