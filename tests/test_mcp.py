"""`patchwrite mcp DIR` through the real MCP SDK client: `ClientSession` over `stdio_client`, the server a subprocess.

Nothing of the protocol is mocked; every edit runs the real gates (TeX in the sandbox).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from support import require_tool

from pytest_patchwrite.edit import number_lines

try:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client
except ImportError:  # pragma: no cover - CI installs the extra (the `test` extra holds it)
    if os.environ.get("CI"):
        raise
    pytest.skip("the MCP SDK is not installed: pip install 'pytest-patchwrite[mcp]'", allow_module_level=True)

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "paper"
SERVER = [sys.executable, "-c", "import sys; from pytest_patchwrite.cli import main; sys.exit(main(sys.argv[1:]))"]
TOOLS = {"list_manuscripts", "read_numbered", "apply_edit", "check", "diff", "bindings"}


def _env() -> dict[str, str]:
    env = {"PYTHONPATH": str(REPO), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    env.update({k: v for k, v in os.environ.items() if k.startswith("PATCHWRITE_")})
    return env


@pytest.fixture
def served(tmp_path: Path) -> Path:
    """Return a served directory holding a copy of the example paper (main.tex, sections/, refs.bib, results.json)."""
    require_tool("pdflatex")
    directory = tmp_path / "served"
    shutil.copytree(EXAMPLE, directory)
    return directory


@asynccontextmanager
async def session(
    directory: Path, errlog: Path | None = None, server: list[str] = SERVER
) -> AsyncIterator[ClientSession]:
    """Yield an initialized client session with `patchwrite mcp directory` (its stderr to `errlog`)."""
    params = StdioServerParameters(command=server[0], args=[*server[1:], "mcp", str(directory)], env=_env())
    with open(errlog or os.devnull, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield client


def data(result: Any) -> dict[str, Any]:
    """Return a successful tool result's structured content."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    # the text block carries the same object for clients that read only text
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    """Return a tool error's one line (and fail if the call succeeded)."""
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert "\n" not in text.strip() and "Traceback" not in text
    return text


def run(main: Any) -> Any:
    return anyio.run(main)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fenced(start: int, end: int, *body: str) -> str:
    return f"```EDIT {start} {end}\n" + "".join(f"{line}\n" for line in body) + "```\n"


def test_tools_and_their_schemas(served: Path) -> None:
    async def main() -> Any:
        async with session(served) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(main)}
    assert set(tools) == TOOLS
    apply = tools["apply_edit"]
    assert apply.input_schema["required"] == ["path", "edit"]
    assert set(apply.input_schema["properties"]) == {"path", "edit", "revision"}
    # the grammar's rules and an example are in the description a model reads
    assert "```EDIT N M" in apply.description and "DELETE N M" in apply.description
    assert "stale_revision" in apply.description and "```EDIT 12 12" in apply.description
    read = tools["read_numbered"].input_schema
    assert read["required"] == ["path"]
    assert {s["type"] for s in read["properties"]["start"]["anyOf"]} == {"integer", "null"}
    assert tools["diff"].input_schema["required"] == ["path", "base"]
    assert tools["list_manuscripts"].input_schema.get("required", []) == []
    assert tools["read_numbered"].annotations.read_only_hint is True
    assert tools["apply_edit"].annotations.read_only_hint is False
    assert all(tool.description and tool.output_schema for tool in tools.values())
    result_fields = apply.output_schema["properties"]
    assert {"accepted", "stage", "reason", "span", "violations", "revision", "context", "hint"} <= set(result_fields)
    assert "revision" in tools["read_numbered"].output_schema["required"]


def test_list_and_read_numbered(served: Path) -> None:
    async def main() -> tuple[dict[str, Any], ...]:
        async with session(served) as client:
            listed = data(await client.call_tool("list_manuscripts", {}))
            whole = data(await client.call_tool("read_numbered", {"path": "sections/intro.tex"}))
            window = data(await client.call_tool("read_numbered", {"path": "main.tex", "start": 3, "end": 5}))
            return listed, whole, window

    listed, whole, window = run(main)
    assert listed["manuscripts"] == [
        {"root": "main.tex", "files": ["main.tex", "sections/intro.tex", "sections/results.tex"], "lines": 49}
    ]
    intro = served / "sections" / "intro.tex"
    assert whole["text"] == number_lines(intro.read_text())
    assert whole["revision"] == sha(intro)
    assert (whole["start"], whole["end"], whole["total_lines"]) == (1, 6, 6)
    assert whole["next_start"] is None
    lines = number_lines((served / "main.tex").read_text()).splitlines(keepends=True)
    assert window["text"] == "".join(lines[2:5])
    assert window["text"].startswith(" 3 | \\documentclass")
    assert (window["start"], window["end"], window["next_start"]) == (3, 5, 6)


def test_accepted_edit_changes_exactly_the_interval(served: Path) -> None:
    intro = served / "sections" / "intro.tex"
    before = intro.read_bytes().splitlines(keepends=True)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with session(served) as client:
            seen = data(await client.call_tool("read_numbered", {"path": "sections/intro.tex"}))
            edit = fenced(3, 3, "Vision encoders are known to be sensitive to local corruptions~\\citep{smith2020}.")
            args = {"path": "sections/intro.tex", "edit": edit, "revision": seen["revision"]}
            return seen, data(await client.call_tool("apply_edit", args))

    seen, result = run(main)
    assert result["accepted"] is True and result["stage"] is None and result["reason"] is None
    assert result["span"] == [3, 3] and result["violations"] == []
    after = intro.read_bytes().splitlines(keepends=True)
    assert after[:2] == before[:2] and after[3:] == before[3:]
    assert after[2] == b"Vision encoders are known to be sensitive to local corruptions~\\citep{smith2020}.\n"
    assert result["revision"] == sha(intro) != seen["revision"]
    assert "3 | Vision encoders are known" in result["context"]["text"]
    assert result["context"]["start"] == 1 and result["context"]["end"] == 6


def test_rejections_at_each_stage_leave_the_bytes_and_say_why(served: Path) -> None:
    results = served / "sections" / "results.tex"
    before = results.read_bytes()
    line3 = "Accuracy was 91.4\\% compared with the baseline 68.2\\%~\\citep{lee2019}."
    candidates = {
        "parse": "```EDIT 3 3\n```\n",
        "compile": fenced(3, 3, line3.replace("91.4\\%", "$91.4\\%")),
        "evidence": fenced(3, 3, line3.replace("\\citep{lee2019}", "\\citep{lee2019,fake2024}")),
        "number": fenced(3, 3, line3.replace("91.4", "99.9")),
    }

    async def main() -> dict[str, dict[str, Any]]:
        out = {}
        async with session(served) as client:
            for name, edit in candidates.items():
                args = {"path": "sections/results.tex", "edit": edit}
                out[name] = data(await client.call_tool("apply_edit", args))
                assert results.read_bytes() == before, name
        return out

    out = run(main)
    assert all(r["accepted"] is False and r["revision"] == sha(results) for r in out.values())
    parse = out["parse"]
    assert (parse["stage"], parse["reason"]) == ("parse", "empty_replacement")
    assert "DELETE 3 3" in parse["violations"][0]["message"]
    compile_ = out["compile"]
    assert compile_["stage"] == "compile"
    assert any(v["file"] == "sections/results.tex" and v["line"] == 3 for v in compile_["violations"])
    assert "compile" in compile_["hint"]
    evidence = out["evidence"]
    assert (evidence["stage"], evidence["reason"]) == ("evidence", "unknown_cite:fake2024")
    assert evidence["violations"][0]["line"] == 3 and evidence["violations"][0]["file"] == "sections/results.tex"
    number = out["number"]
    assert (number["stage"], number["reason"]) == ("evidence", "unattested_number:99.9\\%")


def test_stale_revision_is_refused(served: Path) -> None:
    intro = served / "sections" / "intro.tex"

    async def main() -> dict[str, Any]:
        async with session(served) as client:
            seen = data(await client.call_tool("read_numbered", {"path": "sections/intro.tex"}))
            # someone else changes the file after the agent read it
            intro.write_bytes(intro.read_bytes().replace(b"sensitive", b"vulnerable"))
            edit = fenced(4, 4, "The encoder uses 12 layers and a learned tokenizer, following the setup")
            args = {"path": "sections/intro.tex", "edit": edit, "revision": seen["revision"]}
            return data(await client.call_tool("apply_edit", args))

    changed = intro.read_bytes()
    result = run(main)
    assert (result["accepted"], result["stage"], result["reason"]) == (False, None, "stale_revision")
    assert intro.read_bytes() == changed.replace(b"sensitive", b"vulnerable")
    assert result["revision"] == sha(intro)


class Inotify:
    """The kernel's record of every open of one file (Linux inotify through libc): proof that a file was not read."""

    IN_OPEN, IN_ACCESS, IN_NONBLOCK = 0x20, 0x01, 0o4000

    def __init__(self, path: Path) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = libc.inotify_init1(self.IN_NONBLOCK)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        assert libc.inotify_add_watch(self.fd, str(path).encode(), self.IN_OPEN | self.IN_ACCESS) >= 0

    def events(self) -> int:
        try:
            return len(os.read(self.fd, 65536))
        except BlockingIOError:
            return 0

    def close(self) -> None:
        os.close(self.fd)


def test_paths_outside_dir_are_refused_without_being_opened(served: Path) -> None:
    secret = served.parent / "secret.tex"
    secret.write_text("\\documentclass{article}\n\\begin{document}\nsecret\n\\end{document}\n")
    (served / "link.tex").symlink_to(secret)
    (served / ".hidden.tex").write_text("hidden\n")
    watch = Inotify(secret)
    calls = [
        ("read_numbered", {"path": "../secret.tex"}),
        ("read_numbered", {"path": str(secret)}),
        ("read_numbered", {"path": "link.tex"}),
        ("read_numbered", {"path": "sections/../../secret.tex"}),
        ("apply_edit", {"path": "link.tex", "edit": fenced(3, 3, "changed")}),
        ("check", {"path": "../secret.tex"}),
        ("diff", {"path": "link.tex", "base": "HEAD"}),
        ("read_numbered", {"path": ".hidden.tex"}),
    ]

    async def main() -> list[str]:
        async with session(served) as client:
            return [error_text(await client.call_tool(name, args)) for name, args in calls]

    try:
        errors = run(main)
        assert watch.events() == 0  # nothing opened the file outside DIR
        assert all("it is not read" in e for e in errors), errors
        assert "secret" not in "".join(e.split(":", 2)[-1] for e in errors[:4]).replace("secret.tex", "")
        secret.read_bytes()
        assert watch.events() > 0  # the watch does see an open: the check above could fail
    finally:
        watch.close()
    assert secret.read_text().count("secret") == 1


def test_two_concurrent_edits_serialize_and_neither_is_lost(served: Path) -> None:
    intro = served / "sections" / "intro.tex"
    edits = {
        3: "Vision encoders are sensitive to small local corruptions~\\citep{smith2020}.",
        6: "held-out split; patch-level attacks were surveyed by \\citet{garcia2021}.",
        5: "of \\citet{smith2020}. Section~\\ref{sec:results} reports the accuracy on the",
    }

    out: list[dict[str, Any]] = []

    async def edit_line(client: ClientSession, line: int) -> None:
        args = {"path": "sections/intro.tex", "edit": fenced(line, line, edits[line])}
        out.append(data(await client.call_tool("apply_edit", args)))

    async def one_client() -> list[dict[str, Any]]:
        async with session(served) as client, anyio.create_task_group() as group:
            group.start_soon(edit_line, client, 3)
            group.start_soon(edit_line, client, 6)
        return out[:]

    async def own_session(line: int) -> None:
        async with session(served) as client:
            await edit_line(client, line)

    async def two_clients() -> list[dict[str, Any]]:
        out.clear()
        async with anyio.create_task_group() as group:
            group.start_soon(own_session, 5)
            group.start_soon(own_session, 3)
        return out

    first = run(one_client)
    assert [r["accepted"] for r in first] == [True, True]
    lines = intro.read_text().splitlines()
    assert lines[2] == edits[3] and lines[5] == edits[6]
    # a second server process on the same file: the file lock orders them; line 3 is rewritten to itself
    second = run(two_clients)
    assert [r["accepted"] for r in second] == [True, True]
    lines = intro.read_text().splitlines()
    assert (lines[2], lines[4], lines[5]) == (edits[3], edits[5], edits[6])
    assert len(lines) == 6


CLIENT = """
import sys, anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env={env!r})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        print("calling", flush=True)
        await client.call_tool("apply_edit", {{"path": "main.tex", "edit": {edit!r}}})
        print("returned", flush=True)

anyio.run(main)
"""


def _stat(pid: int | str) -> list[str] | None:
    """Return the fields of /proc/PID/stat after the command name (state, ppid, ...), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and (f := _stat(e)) and int(f[1]) == pid]


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _locked_by_someone(path: Path) -> bool:
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our lock at once
    return False


def test_a_client_killed_mid_edit_leaves_a_whole_file(served: Path, tmp_path: Path) -> None:
    main_tex = served / "main.tex"
    before = main_tex.read_bytes()
    # a candidate that keeps TeX busy for seconds, so the kill lands while the server holds the file lock
    slow = "\\newcount\\pwloop \\loop\\advance\\pwloop by 1 \\ifnum\\pwloop<6000000 \\repeat"
    edit = fenced(13, 13, "\\maketitle", slow)
    script = tmp_path / "client.py"
    script.write_text(CLIENT.format(env=_env(), edit=edit))
    client = subprocess.Popen([sys.executable, str(script), *SERVER, "mcp", str(served)], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
    server = None
    try:
        assert client.stdout is not None and client.stdout.readline().strip() == "calling"
        deadline = time.monotonic() + 300  # a bound on waiting, not a timing assertion
        while not _locked_by_someone(main_tex):
            assert client.poll() is None and time.monotonic() < deadline, "the edit never took the file lock"
            time.sleep(0.01)
        (server,) = _children(client.pid)
        client.send_signal(signal.SIGKILL)
        client.wait()
        while _alive(server):  # the server finishes the edit it started, then sees its stdin closed
            assert time.monotonic() < deadline, "the server did not exit after its client died"
            time.sleep(0.05)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if server is not None and _alive(server):
            os.kill(server, signal.SIGKILL)
        if client.stdout is not None:
            client.stdout.close()
    after = main_tex.read_bytes()
    candidate = before.replace(b"\\maketitle\n", f"\\maketitle\n{slow}\n".encode(), 1)
    assert after in (before, candidate)
    assert not _locked_by_someone(main_tex)
    assert not [p for p in served.iterdir() if p.name.startswith(".") or p.suffix == ".tmp"]


def test_the_server_survives_tool_errors_and_serves_the_next_call(served: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "server-stderr.txt"
    planted = tmp_path / "written-by-git-if-the-option-passed"
    (served / "binary.tex").write_bytes(b"\\documentclass{article}\xff\n")

    async def main() -> tuple[list[str], dict[str, Any]]:
        async with session(served, errlog) as client:
            errors = [
                error_text(await client.call_tool("read_numbered", {"path": "missing.tex"})),
                error_text(await client.call_tool("read_numbered", {"path": "main.tex", "start": 0})),
                error_text(await client.call_tool("read_numbered", {"path": "main.tex", "start": 999})),
                error_text(await client.call_tool("read_numbered", {"path": "binary.tex"})),
                error_text(await client.call_tool("apply_edit", {"path": "results.json", "edit": fenced(1, 1, "{")})),
                error_text(await client.call_tool("apply_edit", {"path": "main.tex", "edit": "  "})),
                error_text(await client.call_tool("apply_edit", {"path": "main.tex", "edit": "x", "revision": "1"})),
                error_text(await client.call_tool("diff", {"path": "main.tex", "base": f"--output={planted}"})),
                error_text(await client.call_tool("no_such_tool", {})),
            ]
            return errors, data(await client.call_tool("read_numbered", {"path": "main.tex", "end": 2}))

    errors, after = run(main)
    assert "missing.tex: no such file" in errors[0]
    assert "invalid arguments: start: Input should be greater than or equal to 1" in errors[1]
    assert "start 999 is outside the file's lines 1..25" in errors[2]
    assert "binary.tex:1: not valid UTF-8" in errors[3]
    assert "results.json: is not a .tex file of a manuscript" in errors[4]
    assert "the edit is empty" in errors[5] and "DELETE N M" in errors[5]
    assert "64-hex-digit" in errors[6]
    assert "is not a git revision name" in errors[7]
    assert after["text"].startswith(" 1 | % !TEX program = pdflatex")
    assert "Traceback" not in errlog.read_text()
    assert not planted.exists()  # the option was never passed to git (a path of this test's own, not /tmp/x)


# the server with a Python audit hook on `open`: every open of a manuscript file by name, outside the sandboxes
# (the sandbox copy opens files relative to a directory's descriptor: the hook sees bare names), written to a file
COUNTING_SERVER = [sys.executable, "-c", """
import collections, json, os, sys, threading
out, names, sandboxes = sys.argv[1], set(json.loads(sys.argv[2])), sys.argv[3]
counts, lock = collections.Counter(), threading.Lock()
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if os.path.basename(path) in names and not path.startswith(sandboxes):
            with lock:
                counts[os.path.basename(path)] += 1
                with open(out + ".part", "w") as f:
                    json.dump(counts, f)
                os.replace(out + ".part", out)
sys.addaudithook(hook)
from pytest_patchwrite.cli import main
sys.exit(main(sys.argv[4:]))
"""]
MANUSCRIPT = ["main.tex", "intro.tex", "results.tex", "refs.bib", "results.json"]


def test_each_call_reads_the_manuscript_once(served: Path, tmp_path: Path) -> None:
    counts = tmp_path / "opens.json"
    sandboxes = os.path.join(os.environ.get("TMPDIR", "/tmp"), "patchwrite-")
    server = [*COUNTING_SERVER, str(counts), json.dumps(MANUSCRIPT), sandboxes]

    def opens() -> dict[str, int]:
        return json.loads(counts.read_text()) if counts.exists() else {}

    async def main() -> list[dict[str, int]]:
        seen = []
        async with session(served, server=server) as client:
            assert data(await client.call_tool("check", {"path": "sections/intro.tex"}))["ok"] is True
            seen.append(opens())
            edit = fenced(3, 3, "Vision encoders are known to be sensitive to local corruptions~\\citep{smith2020}.")
            result = data(await client.call_tool("apply_edit", {"path": "sections/intro.tex", "edit": edit}))
            assert result["accepted"] is True
            seen.append(opens())
        return seen

    checked, applied = run(main)
    assert set(checked) == set(MANUSCRIPT), checked  # the hook saw every file read
    # a check reads each file once into its snapshot and the compile copies it: at most twice
    assert max(checked.values()) <= 2, checked
    edits = {name: applied.get(name, 0) - checked.get(name, 0) for name in MANUSCRIPT}
    # as `patchwrite apply`: the edited file found before the lock, read under it, locked, compared before the swap;
    # the others read once and compared once
    assert edits.pop("intro.tex") <= 4, edits
    assert max(edits.values()) <= 2, edits


def test_only_files_a_root_under_dir_reads_can_be_edited_or_checked(served: Path) -> None:
    (served / "sections" / "orphan.tex").write_text("No root inputs this file.\n")
    (served / "sections" / "named.tex").write_text("% !TEX root = ../main.tex\nNamed, never input.\n")
    before = {p: p.read_bytes() for p in served.rglob("*.tex")}

    async def main() -> list[str]:
        async with session(served) as client:
            out = []
            for name in ("sections/orphan.tex", "sections/named.tex"):
                args = {"path": name, "edit": fenced(1, 1, "Changed.")}
                out.append(error_text(await client.call_tool("apply_edit", args)))
                out.append(error_text(await client.call_tool("check", {"path": name})))
            return out

    orphan_edit, orphan_check, named_edit, named_check = run(main)
    for text in (orphan_edit, orphan_check):
        assert "sections/orphan.tex: no root manuscript" in text, text
    for text in (named_edit, named_check):
        assert "sections/named.tex: is not read by the manuscript main.tex" in text, text
    assert {p: p.read_bytes() for p in served.rglob("*.tex")} == before


def _hostile(directory: Path, timeout: int) -> None:
    """Write a root of about 13 MB dense with numbers (unbounded, its evidence locks take minutes) and a timeout."""
    directory.mkdir()
    numbers = "\n".join(" ".join(f"{i}.{j:03d}" for j in range(12)) for i in range(110_000))
    (directory / "main.tex").write_text(f"% !patchwrite log = r.json\n\\documentclass{{article}}\n"
                                        f"\\begin{{document}}\n{numbers}\n\\end{{document}}\n")  # fmt: skip
    (directory / "r.json").write_text('{"acc": 91.4}')
    (directory / "pyproject.toml").write_text(f'[tool.pytest.ini_options]\npatchwrite_timeout = "{timeout}"\n')


def test_a_hostile_manuscript_is_stopped_at_the_timeout_and_the_server_serves_on(tmp_path: Path) -> None:
    require_tool("pdflatex")
    timeout = 3
    directory = tmp_path / "hostile"
    _hostile(directory, timeout)

    async def main() -> tuple[dict[str, Any], float, str, dict[str, Any]]:
        async with session(directory) as client:
            started = time.monotonic()
            checked = data(await client.call_tool("check", {"path": "main.tex"}))
            seconds = time.monotonic() - started
            bound = error_text(await client.call_tool("bindings", {"path": "main.tex"}))
            after = data(await client.call_tool("read_numbered", {"path": "main.tex", "end": 2}))
            return checked, seconds, bound, after

    checked, seconds, bound, after = run(main)
    gates = checked["manuscripts"][0]["gates"]
    for name in ("citations", "numbers", "placeholders"):
        assert [v["kind"] for v in gates[name]["violations"]] == ["timeout"], gates[name]
        assert f"did not finish within {timeout} s" in gates[name]["violations"][0]["message"]
    assert checked["ok"] is False
    # the bound held in the server's worker thread: unbounded, this call takes minutes (a generous upper limit)
    assert seconds < 10 * timeout
    assert f"did not finish within {timeout} s" in bound and "patchwrite_timeout" in bound
    assert after["text"].split("|", 1)[1].startswith(" % !patchwrite log = r.json")  # the server answers the next call


def test_check_and_diff(served: Path) -> None:
    subprocess.run(["git", "init", "-q", str(served)], check=True)
    git = ["git", "-C", str(served), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "paper"], check=True)

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with session(served) as client:
            checked = data(await client.call_tool("check", {"path": "sections/intro.tex"}))
            edit = fenced(4, 4, "The encoder uses 16 layers and a frozen tokenizer, following the setup")
            applied = data(await client.call_tool("apply_edit", {"path": "sections/intro.tex", "edit": edit}))
            diffed = data(await client.call_tool("diff", {"path": "main.tex", "base": "HEAD"}))
            intro = served / "sections" / "intro.tex"  # a change no gate saw: a reference only the engine knows
            intro.write_text(intro.read_text() + "See Section~\\ref{sec:nowhere}.\n")
            broken = data(await client.call_tool("diff", {"path": "main.tex", "base": "HEAD"}))
            return checked, applied, diffed, broken

    checked, applied, diffed, broken = run(main)
    assert diffed["compile"]["ok"] is True and diffed["ok"] is True
    assert [(v["kind"], v["token"]) for v in broken["violations"]] == [("undefined_reference", "sec:nowhere")]
    assert broken["ok"] is False
    (manuscript,) = checked["manuscripts"]
    assert manuscript["path"] == "main.tex" and checked["ok"] is True
    assert set(manuscript["gates"]) == {"compile", "citations", "numbers", "placeholders"}
    assert all(gate["ok"] for gate in manuscript["gates"].values())
    assert applied["accepted"] is True  # an integer: not empirical under the default number policy
    assert diffed["base"] == "HEAD" and diffed["numeric_jaccard"] < 1.0
    moved = {(c["token"], c["file"]) for c in diffed["changes"]}
    assert ("16", "sections/intro.tex") in moved or ("12", "sections/intro.tex") in moved


@pytest.mark.parametrize("mode", ["head", "base"])
def test_diff_honours_evidence_from_in_the_project_settings(served: Path, mode: str) -> None:
    """A change whose own log attests its new number: under `patchwrite_evidence_from = base` the MCP `diff` fails,
    as the pytest `diff` item does (tests/test_prdiff.py); under `head` it warns."""
    from pytest_patchwrite.mcpserver.workspace import Workspace

    (served / "pytest.ini").write_text(f"[pytest]\npatchwrite_evidence_from = {mode}\n")
    subprocess.run(["git", "init", "-q", str(served)], check=True)
    git = ["git", "-C", str(served), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "paper"], check=True)
    results = served / "sections" / "results.tex"
    results.write_text(results.read_text().replace("Ours & 91.4 & 86.9", "Ours & 91.4 & 88.8"))
    log = served / "results.json"
    log.write_text(log.read_text().replace('"occluded_acc": 0.869}', '"occluded_acc": 0.869, "rerun": 0.888}'))
    diffed = Workspace(served).diff("main.tex", "HEAD")
    violations = diffed["violations"]
    attested = [(v["kind"], v["token"], v["severity"]) for v in violations if v["kind"] == "attested_by_change"]
    assert attested == [("attested_by_change", "88.8", "warning" if mode == "head" else "error")]
    assert diffed["ok"] is (mode == "head")


def test_a_bad_setting_reads_the_same_in_pytest_and_the_server(served: Path, pytester: pytest.Pytester) -> None:
    """One schema: the same bad value is the same one-line error in both faces."""
    from pytest_patchwrite.errors import InputError
    from pytest_patchwrite.mcpserver.project import load_settings

    (served / "pytest.ini").write_text("[pytest]\npatchwrite_evidence_from = tip\n")
    with pytest.raises(InputError) as raised:
        load_settings(served)
    assert raised.value.problem == "patchwrite_evidence_from = 'tip': use head or base"
    pytester.makeini("[pytest]\npatchwrite_evidence_from = tip\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ERROR: patchwrite_evidence_from = 'tip': use head or base" in result.stderr.str()


def test_bindings_are_shown_never_written(served: Path) -> None:
    bindings_file = served / "main.bindings.json"

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with session(served) as client:
            before = data(await client.call_tool("bindings", {"path": "sections/results.tex"}))
            assert not bindings_file.exists()  # the tool only looks
            done = subprocess.run([*SERVER, "bind", str(served / "main.tex")], capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
            assert done.returncode == 0, done.stderr
            return before, data(await client.call_tool("bindings", {"path": "main.tex"}))

    before, after = run(main)
    assert (before["exists"], before["up_to_date"], before["current"]) == (False, False, [])
    assert before["bindings_file"] == "main.bindings.json"
    added = {(row["file"], row["line"], row["token"], row["at"]) for row in before["would_add"]}
    assert ("sections/results.tex", 3, "91.4\\%", "ours.clean_acc") in added and len(added) == 8
    assert ("sections/intro.tex", 4, "12", "model.layers") in added  # a count its sentence names binds too
    assert (after["exists"], after["up_to_date"], after["would_add"], after["would_remove"]) == (True, True, [], [])
    assert len(after["current"]) == 8 and after["counts"]["bound"] == 8


def test_project_settings_are_read_as_data_and_conftest_is_not_loaded(served: Path, tmp_path: Path) -> None:
    marker = tmp_path / "conftest-ran"
    settings = '[tool.pytest.ini_options]\npatchwrite_max_span = "2"\npatchwrite_trusted_input = true\n'
    (served / "pyproject.toml").write_text(settings)
    (served / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\n")

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with session(served) as client:
            listed = data(await client.call_tool("list_manuscripts", {}))
            edit = fenced(3, 5, "a", "b", "c")
            return listed, data(await client.call_tool("apply_edit", {"path": "sections/intro.tex", "edit": edit}))

    listed, result = run(main)
    assert (result["stage"], result["reason"]) == ("parse", "span_too_long")
    assert not marker.exists()
    assert listed["settings"]["file"] == str(served / "pyproject.toml")
    assert listed["settings"]["ignored"] == ["patchwrite_trusted_input (the server always runs TeX in the sandbox)"]


def test_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([*SERVER, "mcp", str(tmp_path / "nope")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "not a directory" in done.stderr


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    from pytest_patchwrite.errors import InputError
    from pytest_patchwrite.mcpserver import _require_sdk

    def absent(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", absent)
    with pytest.raises(InputError, match=r"pip install 'pytest-patchwrite\[mcp\]'"):
        _require_sdk()


def test_an_internal_error_is_one_line_and_logged(served: Path, caplog: pytest.LogCaptureFixture) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from pytest_patchwrite.mcpserver.server import _run_tool
    from pytest_patchwrite.mcpserver.workspace import Workspace

    workspace = Workspace(served)

    def broken() -> dict[str, Any]:
        raise KeyError("a bug\nwith two lines")

    with pytest.raises(ToolError) as raised:
        _run_tool(workspace, broken)
    message = str(raised.value)
    assert message.startswith("internal error: KeyError:") and "\n" not in message
    assert "bug in patchwrite" in message
    assert any(r.exc_info and "a bug" in str(r.exc_info[1]) for r in caplog.records)  # the traceback, for stderr
    assert not workspace.lock.locked()  # the next call is served
    assert _run_tool(workspace, workspace.read_numbered, "main.tex", 1, 1)["end"] == 1


def test_settings_files_as_pytest_finds_them(tmp_path: Path) -> None:
    from pytest_patchwrite.errors import InputError
    from pytest_patchwrite.mcpserver.project import load_settings

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    paper = tmp_path / "paper"
    paper.mkdir()
    (tmp_path / "tox.ini").write_text("[pytest]\npatchwrite_numbers = strict\npatchwrite_log = results/*.json\n"
                                      "patchwrite_cache_dir = .cache\npatchwrite_max_runs = 3\n")  # fmt: skip
    found = load_settings(paper)
    assert found.source == tmp_path / "tox.ini"
    assert (found.options.numbers, found.options.strict, found.options.max_runs) == ("decimals", True, 3)
    assert found.options.logs == [tmp_path / "results/*.json"]
    assert found.options.cache_dir is None and found.ignored[0].startswith("patchwrite_cache_dir")
    (paper / "setup.cfg").write_text("[metadata]\nname = x\n")  # no [tool:pytest]: not pytest's file
    (tmp_path / "pytest.ini").write_text("[pytest]\npatchwrite_engine = xelatex\n")
    assert load_settings(paper).options.default_engine == "xelatex"  # pytest.ini wins over tox.ini
    (paper / "pyproject.toml").write_text('[tool.pytest.ini_options]\npatchwrite_timeout = "0"\n')
    with pytest.raises(InputError, match="pyproject.toml"):
        load_settings(paper)
    (paper / "pyproject.toml").write_text("[tool.black]\n")  # no pytest table: keep walking up
    assert load_settings(paper).source == tmp_path / "pytest.ini"
    assert load_settings(tmp_path / "paper").max_span == 40


def test_untrusted_text_in_results_is_escaped_and_bounded() -> None:
    from pytest_patchwrite.mcpserver.workspace import clean

    assert clean("key\x1b[31m\u202e\n::warning x") == "key\\x1b[31m\\u202e\\n::warning x"
    assert clean("x" * 500, 10) == "x" * 10 + "... (490 more characters)"


def test_hostile_file_names_are_exact_handles_and_escaped_findings(served: Path) -> None:
    """A file name is a handle a client passes back (exact), and a finding's text is shown (escaped): one rule."""
    evil = "r\x1b[31mx\u202e"
    shutil.move(served / "sections" / "results.tex", served / "sections" / f"{evil}.tex")
    main_tex = served / "main.tex"
    main_tex.write_text(main_tex.read_text().replace("\\input{sections/results}", f"\\input{{sections/{evil}}}"))

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with session(served) as client:
            listed = data(await client.call_tool("list_manuscripts", {}))
            name = next(f for f in listed["manuscripts"][0]["files"] if "\x1b" in f)
            read = data(await client.call_tool("read_numbered", {"path": name, "start": 1, "end": 3}))
            return listed, read, data(await client.call_tool("bindings", {"path": "main.tex"}))

    listed, read, bindings = run(main)
    entry = listed["manuscripts"][0]
    assert f"sections/{evil}.tex" in entry["files"]  # exact: passed back as `path`, it reads the file
    assert entry["hostile_names"] == ["sections/r\\x1b[31mx\\u202e.tex"]
    assert read["path"] == f"sections/{evil}.tex" and "91.4" in read["text"]
    rows = bindings["would_add"] + bindings["unattested"]
    files = {row["file"] for row in rows}
    assert "sections/r\\x1b[31mx\\u202e.tex" in files  # findings are escaped as every other output
    assert not any("\x1b" in str(row) or "\u202e" in str(row) for row in rows)
