"""Attacks by a manuscript from a stranger: each row is one way out, tried against the real engines and sandbox.

Every row builds a small repository (a `.git/config` holding a token) beside a secret directory
outside it, runs `patchwrite check --json` on the attacking manuscript with a canary in the
environment, and asserts that no canary reaches stdout, stderr, the verdict cache or any file,
and that nothing outside the manuscript's directory changed. A new vector is one row.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.engine import sandbox, sandboxcmd
from pytest_patchwrite.files.tempfiles import temp_root

CANARY = "CANARYc4f2e91b"  # in the secret files, .git/config and the environment
CANARY_NUMBER = "31337.4242"  # a number, so an evidence gate that read a secret would echo it
SECRET_TEX = f"{CANARY} {CANARY_NUMBER} \\cite{{{CANARY}key}}\n"


def doc(body: str, preamble: str = "", magic: str = "") -> str:
    """Return a root manuscript around `body`, as a template (`{{`/`}}` are braces, `{secret}` etc. fields)."""
    return magic + "\\documentclass{{article}}\n" + preamble + "\\begin{{document}}\n" + body + "\n\\end{{document}}\n"


def plain(template: str) -> str:
    """Return a template with no fields as the TeX it stands for."""
    return template.format()


def read_back(path: str) -> str:
    """Return TeX that reads the first line of `path` and prints it in the log and the PDF."""
    return (
        f"\\newread\\rd\\openin\\rd={path} \\ifeof\\rd\\else\\read\\rd to\\xx "
        "\\typeout{{LEAK:\\meaning\\xx}}\\errmessage{{LEAK:\\meaning\\xx}}\\xx\\fi"
    )


def read_all(path: str) -> str:
    """Return TeX that reads every line of `path` and reports each as an error (so the JSON output shows it)."""
    return (
        f"\\newread\\ra\\openin\\ra={path} \\def\\rl{{{{\\ifeof\\ra\\else\\read\\ra to\\xx "
        "\\errmessage{{LEAK:\\meaning\\xx}}\\expandafter\\rl\\fi}}\\rl\\closein\\ra "
    )


@dataclass
class Attack:
    """One vector: the files of `paper/` (formatted with {secret}, {home}, {outside}) and how it is run."""

    id: str
    files: dict[str, str]
    engine: str = "pdflatex"
    tools: tuple[str, ...] = ()
    setup: Callable[[Path], None] | None = None  # extra links etc., given the test's base directory
    expect_exit: tuple[int, ...] = (0, 1)
    expect_kinds: tuple[str, ...] = ()  # violation kinds that must be reported (located, not echoed)
    expect_stderr: str = ""  # the one line an input error (exit 2) must say
    env: dict[str, str] = field(default_factory=dict)


def _link(name: str, target: str) -> Callable[[Path], None]:
    def make(base: Path) -> None:
        os.symlink(target.format(secret=base / "secret", repo=base / "repo"), base / "repo" / "paper" / name)

    return make


def _hardlink(base: Path) -> None:
    os.link(base / "secret" / "canary.tex", base / "repo" / "paper" / "hl.tex")


def _deep_chain(base: Path) -> None:
    paper = base / "repo" / "paper"
    for i in range(1100):
        (paper / f"c{i}.tex").write_text(f"\\input{{c{i + 1}}}\n" if i < 1099 else "End.\n")


def _escape_dir(base: Path) -> None:
    os.symlink("/", base / "repo" / "paper" / "root")


LUATEX = "% !TEX program = lualatex\n"
LUA = "\\directlua{{{{{code}}}}}"  # braces doubled once more: the row is a template
ATTACKS = [
    Attack("kpathsea-dollar-brace", {"main.tex": doc(read_back("${{X}}{secret}/canary.tex"))}),
    Attack("kpathsea-git-config", {"main.tex": doc(read_back("${{X}}../.git/config"))}),
    Attack("kpathsea-tilde", {"main.tex": doc(read_back("~/canary.tex"))}),
    Attack("kpathsea-home", {"main.tex": doc(read_back("$HOME/canary.tex"))}),
    Attack("proc-environ", {"main.tex": doc(read_back("${{X}}/proc/self/environ"))}),
    Attack("proc-parent-environ", {"main.tex": doc(read_back("${{X}}/proc/1/environ"))}),
    # the host path of the job directory (under a TMPDIR named with the canary) is in the mount table;
    # `openin_any=r` lets a plain name open it, so no /proc is mounted at all
    Attack(
        "proc-mountinfo",
        {"main.tex": doc(read_all("/proc/self/mountinfo") + read_all("${{X}}/proc/self/mountinfo"))},
        setup=lambda base: (base.parent / f"tmp{CANARY}").mkdir(exist_ok=True),
        env={"TMPDIR": "{base}/../tmp" + CANARY},  # outside the snapshot of `base`
    ),
    Attack(
        "xelatex-kpathsea",
        {"main.tex": doc(read_back("${{X}}{secret}/canary.tex"), magic="% !TEX program = xelatex\n")},
        engine="xelatex",
    ),
    Attack(
        "luatex-io-read",
        {
            "main.tex": doc(
                LUA.format(code='local f=io.open("{secret}/canary.tex") if f then error("LEAK:"..f:read("*l")) end'),
                magic=LUATEX,
            )
        },
        engine="lualatex",
    ),
    Attack(
        "luatex-io-write",
        {
            "main.tex": doc(
                LUA.format(code='local f=io.open("{outside}/pwned.sh","w") if f then f:write("x") end'), magic=LUATEX
            )
        },
        engine="lualatex",
    ),
    Attack(
        "luatex-getenv",
        {"main.tex": doc(LUA.format(code='error("LEAK:"..(os.getenv("PATCHWRITE_CANARY") or "none"))'), magic=LUATEX)},
        engine="lualatex",
    ),
    Attack(
        "luatex-os-lfs",
        {
            "main.tex": doc(
                LUA.format(code='os.rename("{secret}/canary.tex","{outside}/moved") lfs.mkdir("{outside}/d")'),
                magic=LUATEX,
            )
        },
        engine="lualatex",
    ),
    Attack(
        "luatex-big-write",
        {
            "main.tex": doc(
                LUA.format(
                    code='local f=io.open("big","w") local s=string.rep("x",1048576) '
                    "for i=1,4096 do f:write(s) end f:close()"
                ),
                magic=LUATEX,
            )
        },
        engine="lualatex",
        env={"PATCHWRITE_SANDBOX_FILE_MB": "64"},
    ),
    Attack(
        "pdftex-pdfobj-file",
        {
            "main.tex": doc(
                "\\pdfcompresslevel=0\\immediate\\pdfobj stream file {{{secret}/canary.tex}}"
                "\\pdfcatalog{{/X \\the\\pdflastobj\\space 0 R}}x"
            )
        },  # fmt: skip
    ),
    Attack("pdftex-pdfmapfile", {"main.tex": doc("\\pdfmapfile{{{secret}/canary.tex}}x")}),
    Attack(
        "xetex-pdffile",
        {"main.tex": doc('\\XeTeXpdffile "{secret}/canary.pdf" x', magic="% !TEX program = xelatex\n")},
        engine="xelatex",
    ),
    Attack(
        "xetex-picfile",
        {"main.tex": doc('\\XeTeXpicfile "{secret}/canary.png" x', magic="% !TEX program = xelatex\n")},
        engine="xelatex",
    ),
    Attack(
        "xetex-special-fstream",
        {
            "main.tex": doc(
                "\\special{{dvipdfmx:config z 0}}\\special{{pdf:fstream @s ({secret}/canary.tex)}}"
                "\\special{{pdf:put @catalog << /X @s >>}}x",
                magic="% !TEX program = xelatex\n",
            )
        },  # fmt: skip
        engine="xelatex",
    ),
    Attack(
        "xetex-special-image",
        {"main.tex": doc("\\special{{pdf:image ({secret}/canary.pdf)}}x", magic="% !TEX program = xelatex\n")},
        engine="xelatex",
    ),
    Attack(
        "biber-absolute",
        {
            "main.tex": doc(
                "\\cite{{secretkey}}\\printbibliography",
                preamble="\\usepackage{{biblatex}}\\addbibresource{{{secret}/canary.bib}}\n",
            )
        },  # fmt: skip
        tools=("biber",),
        expect_kinds=("outside_tree",),
    ),
    Attack(
        "biber-remote",
        {
            "main.tex": doc(
                "\\nocite{{*}}\\printbibliography",
                preamble="\\usepackage{{biblatex}}\\addbibresource[location=remote]"
                "{{http://127.0.0.1:{port}/leak.bib}}\n",
            )
        },  # fmt: skip
        tools=("biber",),
    ),
    Attack(
        "biber-conf-output",
        {
            "main.tex": doc(
                "\\nocite{{*}}\\printbibliography", preamble="\\usepackage{{biblatex}}\\addbibresource{{refs.bib}}\n"
            ),  # fmt: skip
            "refs.bib": "@misc{{k1, title={{T}}}}\n",
            "biber.conf": "<config><output_file>{outside}/pwned.bbl</output_file></config>\n",
        },
        tools=("biber",),
    ),
    Attack(
        "bibtex-selfautoparent",
        {"main.tex": doc("\\nocite{{*}}\\bibliographystyle{{plain}}\\bibliography{{$SELFAUTOPARENT{secret}/canary}}")},
        tools=("bibtex",),
        expect_kinds=("outside_tree",),
    ),
    Attack(
        "jobname-injection",
        {"x$(cd ..;touch pwned).tex": doc("Hello.", magic="% !TEX program = xelatex\n")},
        engine="xelatex",
    ),
    Attack(
        "symlink-dotfile",
        {"main.tex": doc("\\input{{notes}}")},
        setup=_link("notes.tex", "{repo}/.git/config"),
        expect_kinds=("outside_tree",),
    ),  # fmt: skip
    Attack(
        "symlink-outside",
        {"main.tex": doc("\\input{{data}}")},
        setup=_link("data.tex", "{secret}/canary.tex"),
        expect_kinds=("outside_tree",),
    ),  # fmt: skip
    Attack("hard-link", {"main.tex": doc("\\input{{hl}}")}, setup=_hardlink, expect_kinds=("outside_tree",)),
    Attack("input-absolute", {"main.tex": doc("\\input{{{secret}/canary}}")}, expect_kinds=("outside_tree",)),
    Attack("input-absent-outside", {"main.tex": doc("\\input{{/nonexistent/x}}")}, expect_kinds=("outside_tree",)),
    Attack("input-parent-git", {"main.tex": doc("\\input{{../.git/config}}")}, expect_kinds=("outside_tree",)),
    Attack("input-proc", {"main.tex": doc("\\input{{/proc/self/environ}}")}, expect_kinds=("outside_tree",)),
    Attack(
        "log-outside",
        {"main.tex": doc("Accuracy 1.5.", magic="% !patchwrite log = {secret}/canary.json\n")},
        expect_exit=(2,),  # a declared log the locks cannot use: exit 2 at its declaration, never read
        expect_stderr="main.tex:1: declares the experimental log",
    ),
    Attack(
        "log-symlink-yaml",
        {"main.tex": doc("Accuracy 1.5.", magic="% !patchwrite log = a.yaml\n")},
        setup=_link("a.yaml", "{secret}/canary.yaml"),
        expect_exit=(2,),  # a declared log the locks cannot use: exit 2 at its declaration, never read
        expect_stderr="main.tex:1: declares the experimental log",
    ),
    Attack(
        "log-glob-root",
        {"main.tex": doc("Accuracy 1.5.", magic="% !patchwrite log = /**/*.canary\n")},
        expect_exit=(2,),  # a declared log the locks cannot use: exit 2 at its declaration, never read
        expect_stderr="main.tex:1: declares the experimental log",
    ),
    Attack(
        "log-glob-escape-link",
        {"main.tex": doc("Accuracy 1.5.", magic="% !patchwrite log = root/**/canary.json\n")},
        setup=_escape_dir,
        expect_exit=(2,),  # a declared log the locks cannot use: exit 2 at its declaration, never read
        expect_stderr="main.tex:1: declares the experimental log",
    ),
    Attack(
        "kpsewhich-option",
        {"main.tex": doc("\\cite{{a}}\\bibliographystyle{{plain}}\\bibliography{{-expand-var=$PATCHWRITE_CANARY}}")},
        expect_kinds=("outside_tree",),
    ),
    Attack("deep-input-chain", {"main.tex": doc("\\input{{c0}}")}, setup=_deep_chain),
    Attack("huge-file", {"main.tex": doc("x")}, setup=lambda base: _huge(base), expect_exit=(2,)),
]


def _huge(base: Path) -> None:
    with open(base / "repo" / "paper" / "main.tex", "a") as handle:
        line = "% " + "1.234 " * 1000 + "\n"
        for _ in range(70 * 1024 * 1024 // len(line)):
            handle.write(line)


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        _Counter.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"@misc{remote1, title={R}}\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    """Yield the port of a local HTTP server that records every request (biber's remote fetch)."""
    _Counter.hits = []
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _snapshot(top: Path, skip: set[Path]) -> dict[str, str]:
    out: dict[str, str] = {}
    for current, dirs, files in os.walk(top):
        if Path(current) in skip:
            dirs[:] = []
            continue
        for name in dirs + files:
            path = Path(current) / name
            if path.is_symlink():
                out[str(path)] = "->" + os.readlink(path)
            elif path.is_file():
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[str(path)] = "dir"
    return out


def _canary_files(top: Path) -> list[str]:
    found = []
    for current, _dirs, files in os.walk(top):
        for name in files:
            path = Path(current) / name
            if path.is_symlink() or not path.is_file() or path.stat().st_size > 64 << 20:
                continue
            data = path.read_bytes()
            if CANARY.encode() in data or CANARY_NUMBER.encode() in data:
                found.append(str(path))
    return found


def _world(base: Path, attack: Attack, port: int) -> tuple[Path, dict[str, str]]:
    secret, repo, outside, home = base / "secret", base / "repo", base / "outside", base / "home"
    for d in (secret, repo / ".git", repo / "paper", outside, home):
        d.mkdir(parents=True)
    (repo / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {CANARY}\n")
    for name in ("canary.tex", "canary.canary"):
        (secret / name).write_text(SECRET_TEX)
    (secret / "canary.json").write_text(f'{{"acc": {CANARY_NUMBER}, "{CANARY}": 1.5}}\n')
    (secret / "canary.yaml").write_text(f"acc: [{CANARY_NUMBER}\n{CANARY}: : :\n")
    (secret / "canary.bib").write_text(f"@misc{{secretkey, title={{{CANARY} {CANARY_NUMBER}}}}}\n")
    (secret / "canary.pdf").write_text(f"%PDF-1.4 {CANARY}\n")
    (secret / "canary.png").write_text(f"{CANARY}\n")
    (home / "canary.tex").write_text(SECRET_TEX)
    values = {"secret": str(secret), "outside": str(outside), "home": str(home), "port": str(port), "canary": CANARY}
    root = None
    for name, text in attack.files.items():
        path = repo / "paper" / name
        path.write_text(text.format(**values))
        root = root or path
    if attack.setup:
        attack.setup(base)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHWRITE_NO_SANDBOX")}
    env.update(HOME=str(home), PATCHWRITE_CANARY=CANARY, GITHUB_TOKEN=CANARY, X="")
    env.update({name: value.format(base=base) for name, value in attack.env.items()})
    assert root is not None
    return root, env


def _require(attack: Attack) -> None:
    require_tool("bwrap", "bubblewrap")
    require_tool(attack.engine)
    for tool in attack.tools:
        require_tool(tool)
    if not sandboxcmd.available():
        message = f"bubblewrap cannot make a sandbox here: {sandboxcmd.unavailable_reason()}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _run_check(root: Path, env: dict[str, str], cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(env, XDG_CACHE_HOME=str(cache))
    code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main())"
    # PATCHWRITE_SECURITY_SELFTEST=1 runs every row trusted (unconfined), to see which rows catch a leak
    trusted = ["--trusted-input"] if os.environ.get("PATCHWRITE_SECURITY_SELFTEST") else []
    cmd = [sys.executable, "-c", code, "check", "--json", "--timeout", "60", *trusted, *args, root.name]
    return subprocess.run(cmd, cwd=root.parent, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.id)
def test_attack_is_confined(attack: Attack, tmp_path: Path, server: int) -> None:
    _require(attack)
    base = tmp_path / "w"
    root, env = _world(base, attack, server)
    cache = tmp_path / "cache"
    paper = root.parent
    before = _snapshot(base, set())
    done = _run_check(root, env, cache)
    assert done.returncode in attack.expect_exit, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    for stream in (done.stdout, done.stderr):
        assert CANARY not in stream and CANARY_NUMBER not in stream
    for kind in attack.expect_kinds:
        assert f'"kind": "{kind}"' in done.stdout, done.stdout[-2000:]
    assert attack.expect_stderr in done.stderr, done.stderr[-2000:]
    assert _snapshot(base, set()) == before, "a file outside the sandbox changed"
    assert _canary_files(cache) == []
    assert not list(paper.glob("pwned*")) and not (base / "outside" / "pwned.sh").exists()
    assert not list(temp_root().parent.glob("pwned*")) and not list(temp_root().glob("pwned*"))
    assert _Counter.hits == [], "biber reached the network"


@pytest.mark.parametrize("engine", ["pdflatex", "xelatex"])
def test_embedding_primitives_leave_no_secret_in_the_pdf(engine: str, tmp_path: Path) -> None:
    """The PDF the sandbox writes (twice, as a rerun would read it back) holds no outside file."""
    require_tool(engine)
    require_tool("bwrap", "bubblewrap")
    (tmp_path / "canary.tex").write_text(SECRET_TEX)
    tree = tmp_path / "tree"
    tree.mkdir()
    row = {a.id: a for a in ATTACKS}["pdftex-pdfobj-file" if engine == "pdflatex" else "xetex-special-fstream"]
    values = {"secret": tmp_path, "outside": tmp_path, "home": tmp_path, "port": 0, "canary": CANARY}
    (tree / "main.tex").write_text(row.files["main.tex"].format(**values))
    for _ in range(2):
        sandbox.run(engine, ["-interaction=nonstopmode"], ["main.tex"], tree, deadline=time.monotonic() + 60)
    pdf = tree / "main.pdf"
    # inside the sandbox the file does not exist: the engine stops, or writes a PDF without it
    assert CANARY not in (tree / "main.log").read_text(errors="replace")
    assert not pdf.exists() or CANARY.encode() not in pdf.read_bytes()


def test_canary_is_visible_without_the_sandbox(tmp_path: Path) -> None:
    """The attack rows can fail: unconfined (trusted), the same LuaTeX read does reach the secret."""
    require_tool("lualatex")
    secret = tmp_path / "secret.tex"
    secret.write_text(SECRET_TEX)
    tree = tmp_path / "tree"
    tree.mkdir()
    code = f'local f=io.open("{secret}") if f then texio.write_nl("LEAK:"..f:read("*l")) end'
    (tree / "main.tex").write_text(plain(doc(LUA.format(code=code))))
    args = (["-interaction=nonstopmode"], ["main.tex"], tree)
    sandbox.run("lualatex", *args, deadline=time.monotonic() + 60, confined=False)
    assert CANARY in (tree / "main.log").read_text()
    require_tool("bwrap", "bubblewrap")
    sandbox.run("lualatex", *args, deadline=time.monotonic() + 60, confined=True)
    assert CANARY not in (tree / "main.log").read_text()


def test_without_a_sandbox_lualatex_and_file_primitives_are_refused(tmp_path: Path) -> None:
    require_tool("lualatex")
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(plain(doc("\\directlua{{tex.print(1)}}")))
    (paper / "other.tex").write_text(plain(doc("\\pdfmapfile{{/etc/x}}x")))
    env = dict(os.environ, PATCHWRITE_NO_SANDBOX="1")
    done = _run_check(paper / "main.tex", env, tmp_path / "cache", "other.tex")
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("no OS sandbox") == 1  # said once, clearly
    assert done.stdout.count('"kind": "unconfined"') == 2
    trusted = _run_check(paper / "other.tex", env, tmp_path / "cache", "--trusted-input")
    assert '"kind": "unconfined"' not in trusted.stdout and "no OS sandbox" not in trusted.stderr


def _default_signals() -> None:
    """In a child before exec: SIGTERM, SIGINT and SIGHUP back to their default dispositions."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize("runner", ["patchwrite", "pytest"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_signal_kills_the_engine_and_removes_the_sandbox(signum: int, runner: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    paper = tmp_path / "paper"
    paper.mkdir()
    marker = f"loopmarker{runner}{signum}"
    (paper / f"{marker}.tex").write_text(plain(doc("\\def\\l{{\\l}}\\l")))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    if runner == "patchwrite":
        code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main())"
        cmd = [sys.executable, "-c", code, "check", "--timeout", "120", f"{marker}.tex"]
        interrupted = 130  # KeyboardInterrupt, as the CLI reports it
    else:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist",
               "--patchwrite-timeout=120", f"{marker}.tex"]  # fmt: skip
        interrupted = 2  # pytest's "interrupted"
    # the child takes the default dispositions of the signals under test: a suite started under `nohup` (or by a
    # runner that ignores SIGHUP) would hand it an ignored SIGHUP, which it would then never see
    proc = subprocess.Popen(cmd, cwd=paper, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)  # fmt: skip
    sandboxes = tmp_path / "tmp" / f"patchwrite-{os.getuid()}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(sandboxes.glob("sandbox-*/*.log")):
        time.sleep(0.1)
    assert list(sandboxes.glob("sandbox-*")), "the compile never started"
    time.sleep(0.5)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=60)
    # the usual exit: Python's SIGINT handling, else death by the signal itself
    assert proc.returncode == (interrupted if signum == signal.SIGINT else -signum), err
    assert "Traceback" not in err
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == []
    assert list(sandboxes.glob("sandbox-*")) == [] and list(sandboxes.glob("fonts-*")) == []


@pytest.mark.parametrize("tool", ["bibtex", "biber"])
def test_shared_bibliography_one_level_up_compiles_and_nothing_else_is_visible(tool: str, tmp_path: Path) -> None:
    """`\\bibliography{../refs}` beside `paper/`: the sandbox mirrors the repository (its own files, which latexmk
    sees too), never a dot-directory of it nor anything outside it."""
    require_tool("pdflatex")
    require_tool(tool)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".private").mkdir()
    (repo / "paper").mkdir()
    (repo / "refs.bib").write_text("@misc{k1, title={T}, author={A}, year={2020}}\n")
    (repo / "chapter.tex").write_text("A chapter of the repository.\n")
    (repo / ".private" / "other.tex").write_text(SECRET_TEX)
    (tmp_path / "outside.tex").write_text(SECRET_TEX)
    if tool == "bibtex":
        body = "\\cite{k1}\\input{../chapter}\\input{../.private/other}"
        body += "\\bibliographystyle{plain}\\bibliography{../refs}"
        preamble = ""
    else:
        body, preamble = (
            "\\cite{k1}\\input{../chapter}\\input{../.private/other}\\printbibliography",
            "\\usepackage{biblatex}\\addbibresource{../refs.bib}\n",
        )
    main = repo / "paper" / "main.tex"
    braced = [part.replace("{", "{{").replace("}", "}}") for part in (body, preamble)]
    main.write_text(plain(doc(*braced)))
    done = _run_check(main, dict(os.environ), tmp_path / "cache")
    assert CANARY not in done.stdout + done.stderr
    assert '"kind": "outside_tree"' in done.stdout  # the evidence gate does not read ../.private/other.tex
    assert "other" in done.stdout and '"kind": "missing_file"' in done.stdout, done.stdout  # nor does the engine
    main.write_text(main.read_text().replace("\\input{../.private/other}", "\\input{../../outside}"))
    done = _run_check(main, dict(os.environ), tmp_path / "cache")
    assert CANARY not in done.stdout + done.stderr
    assert '"kind": "outside_tree"' in done.stdout and '"kind": "missing_file"' in done.stdout, done.stdout
    main.write_text(main.read_text().replace("\\input{../../outside}", ""))
    done = _run_check(main, dict(os.environ), tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("row", ["kpathsea-dollar-brace", "input-absolute", "log-outside", "symlink-dotfile"])
def test_pytest_report_holds_no_secret(row: str, tmp_path: Path, server: int) -> None:
    """The same attacks through `pytest --noconftest`: terminal output and `--patchwrite-report` stay clean."""
    attack = {a.id: a for a in ATTACKS}[row]
    _require(attack)
    base = tmp_path / "w"
    root, env = _world(base, attack, server)
    (root.parent / "conftest.py").write_text(f"raise SystemExit('{CANARY} conftest ran')\n")  # --noconftest
    report = tmp_path / "report.json"
    env = dict(env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    cmd = [sys.executable, "-m", "pytest", "--noconftest", "-p", "no:randomly", "-p", "no:cacheprovider",
           str(root.parent), f"--patchwrite-report={report}", "-q"]  # fmt: skip
    done = subprocess.run(cmd, cwd=base / "repo", env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert report.exists()
    for text in (done.stdout, done.stderr, report.read_text()):
        assert CANARY not in text and CANARY_NUMBER not in text
    assert _canary_files(tmp_path / "cache") == []


def test_pytest_trusted_input_flag_and_ini(tmp_path: Path) -> None:
    """Without a sandbox, pytest refuses lualatex; `--patchwrite-trusted-input` or the ini option allows it."""
    require_tool("lualatex")
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "main.tex").write_text(plain(doc("\\directlua{{tex.print(1)}}", magic=LUATEX)))
    env = dict(os.environ, PATCHWRITE_NO_SANDBOX="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    base = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "main.tex", "-q"]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *extra], cwd=paper, env=env, capture_output=True, text=True, timeout=300)

    refused = run()
    assert refused.returncode == 1 and "unconfined" in refused.stdout, refused.stdout[-2000:]
    assert run("--patchwrite-trusted-input").returncode == 0
    (paper / "pytest.ini").write_text("[pytest]\npatchwrite_trusted_input = true\n")
    assert run().returncode == 0


def test_log_glob_is_bounded(tmp_path: Path) -> None:
    """A glob over more files than the cap is refused as a whole, not walked to the end."""
    from pytest_patchwrite.files.paths import MAX_GLOB_MATCHES, Boundary, OutsideTree

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(MAX_GLOB_MATCHES + 1):
        (logs / f"r{i}.json").write_text("{}")
    boundary = Boundary(tmp_path)
    assert len(boundary.glob("logs/r1*.json", tmp_path, "logs/r1*.json")) == 112  # r1, r10-19, r100-199, r1000
    with pytest.raises(OutsideTree) as too_many:
        boundary.glob("**/*.json", tmp_path, "**/*.json")
    assert "more than 1000 files" in too_many.value.why
    with pytest.raises(OutsideTree):
        boundary.glob("../**/*.json", tmp_path, "../**/*.json")


@pytest.mark.parametrize("layout", ["texlive", "stray"])
def test_tex_live_outside_usr(layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TeX Live tree elsewhere (`<root>/bin/<platform>/`) is bound read-only; a stray directory never is.

    An engine in a stray directory (`~/bin/pdflatex`) runs confined with only its own file bound read-only
    (sandboxcmd.engine_path): what lies beside it stays out of the sandbox.
    """
    require_tool("pdflatex")
    require_tool("bwrap", "bubblewrap")
    root = tmp_path / "texlive" / "2099"
    bin_dir = root / "bin" / "x86_64-linux" if layout == "texlive" else tmp_path / "home" / "bin"
    bin_dir.mkdir(parents=True)
    if layout == "texlive":
        (root / "texmf-dist").mkdir()
    secret = bin_dir / "secret.txt"
    secret.write_text("operator's file\n")
    fake = bin_dir / "pdflatex"
    script = f"echo fake > faketex.marker\ncat {secret} > leaked.txt 2>/dev/null\nexec /usr/bin/pdflatex \"$@\"\n"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "main.tex").write_text(plain(doc("Hello.")))
    outcome = sandbox.run("pdflatex", ["-interaction=nonstopmode"], ["main.tex"], tree, deadline=time.monotonic() + 60)
    assert outcome.returncode == 0 and (tree / "faketex.marker").exists() and (tree / "main.pdf").exists()
    leaked = (tree / "leaked.txt").read_text()
    assert (leaked != "") == (layout == "texlive"), leaked  # a tree is bound whole; a stray directory never is


# -- integrity: a verdict the manuscript earned -----------------------------------------------------------------
# Each row is one way to make a gate say "pass" (or a false alarm) on the current code; it runs the real engine in
# the real sandbox through `patchwrite` (check, apply after a check) or pytest. Shown failing without the fix by
# running the rows with PYTHONPATH at a checkout from before it (see the closing note of the integrity issue).

REFS = "@article{smith2020, author={Smith, A.}, title={T}, journal={J}, year={2020}}\n"


@dataclass
class Integrity:
    """One vector: `paper/` files, an optional edit applied after a `check` (warm), what must come out."""

    id: str
    files: dict[str, str]
    edit: str | None = None  # applied with `patchwrite apply main.tex` after a `check` of HEAD
    expect_exit: int = 1
    expect_kinds: tuple[str, ...] = ()


def _tex(body: str, preamble: str = "") -> str:
    return ("\\documentclass{article}\n" + preamble + "\\begin{document}\n" + body +
            "\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n")  # fmt: skip


PWOK = "\\makeatletter\n\\AtEndDocument{\\immediate\\write\\@mainaux{\\gdef\\string\\pwok{ok}}}\n\\makeatother\n"
INTEGRITY = [
    Integrity(
        "cite-wrapper-def",
        {"main.tex": _tex("As \\shortcite{smith2020} showed.\nLine.", "\\def\\shortcite{\\cite}\n"), "refs.bib": REFS},
        "EDIT 5 5\nAs \\shortcite{fake2025} showed.\n",
        expect_kinds=("unknown_cite",),
    ),
    Integrity(
        "cite-wrapper-two-args",
        {
            "main.tex": _tex("A \\cite{smith2020}.\nLine.", "\\newcommand{\\citeboth}[2]{\\cite{#1}, \\cite{#2}}\n"),
            "refs.bib": REFS,
        },
        "EDIT 5 5\nAs \\citeboth{smith2020}{fake2025} showed.\n",
        # the cite lock reads the keys the compile cited (its .aux): fake2025 is in no bib, at its line
        expect_kinds=("unknown_cite",),
    ),
    Integrity(
        "ref-wrapper",
        {
            "main.tex": _tex(
                "\\section{A}\\label{sec:a}\nSee \\myref{sec:a}. \\cite{smith2020}",
                "\\newcommand{\\myref}[1]{Section~\\ref{#1}}\n",
            ),
            "refs.bib": REFS,
        },
        "EDIT 6 6\nSee \\myref{sec:nowhere}. \\cite{smith2020}\n",
        expect_kinds=("undefined_reference",),
    ),
    Integrity(
        "cite-wrapper-no-false-alarm",
        {
            "main.tex": _tex("As \\shortcite{smith2020} showed.", "\\newcommand{\\shortcite}[1]{\\cite{#1}}\n"),
            "refs.bib": REFS,
        },
        expect_exit=0,
    ),
    Integrity(
        "warm-aux-defines-macro",
        {"main.tex": _tex("Hello \\cite{smith2020}.\nLine.", PWOK), "refs.bib": REFS},
        "EDIT 8 8\nLine. \\ifx\\pwok\\undefined\\undefinedmacroxyz\\fi\n",
        expect_kinds=("undefined_control_sequence",),
    ),
]


def _patchwrite(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from pytest_patchwrite.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@pytest.mark.parametrize("row", INTEGRITY, ids=lambda r: r.id)
def test_integrity(row: Integrity, tmp_path: Path) -> None:
    require_tool("pdflatex")
    require_tool("bibtex")
    paper = tmp_path / "repo" / "paper"
    paper.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    for name, text in row.files.items():
        (paper / name).write_text(text)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    checked = _patchwrite(paper, env, "check", "--json", "main.tex")
    assert "Traceback" not in checked.stderr
    if row.edit is None:
        assert checked.returncode == row.expect_exit, checked.stdout[-3000:]
        return
    assert checked.returncode == 0, checked.stdout[-3000:]  # HEAD is clean; the check keeps its warm state
    head = (paper / "main.tex").read_bytes()
    (tmp_path / "edit.txt").write_text(row.edit)
    done = _patchwrite(paper, env, "apply", "--json", "main.tex", str(tmp_path / "edit.txt"))
    assert done.returncode == row.expect_exit, done.stdout[-3000:]
    kinds = [v["kind"] for v in json.loads(done.stdout)["violations"]]
    assert set(row.expect_kinds) <= set(kinds), kinds
    assert (paper / "main.tex").read_bytes() == head  # rejected: HEAD's bytes kept


# -- printed output: nothing from a manuscript is a workflow command or a terminal escape -------------------------
STOP = "::stop-commands::TOKEN"
PRINTED = {
    "cite-key-newline-stop-commands": "As \\cite{smith2020,x\n" + STOP + "} showed.",
    "warning-lines-in-the-manuscript": "\\cite{y\n::warning file=main.tex,line=1::forged}\n"
    "\\PackageError{pw}{bad^^J::warning::forged too}{}",
    "ansi-escapes": "As \\cite{\x1b[2J\x1b[31mred\x07} showed \\undefined\x1b[0m.",
}


def _forged(output: str) -> list[str]:
    return [ln for ln in output.splitlines() if ln.lstrip().startswith("::") or "\x1b" in ln or "\x07" in ln]


@pytest.mark.parametrize("row", sorted(PRINTED))
def test_printed_output_holds_no_workflow_command(row: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    repo = tmp_path / "repo"
    paper = repo / "paper"
    paper.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (paper / "main.tex").write_text(_tex("Clean."))
    (paper / "refs.bib").write_text(REFS)
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=T"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    (paper / "main.tex").write_text(_tex(PRINTED[row]))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    for args in (["check", "main.tex"], ["diff", "main.tex", "--base", "main"]):
        done = _patchwrite(paper, env, *args)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert _forged(done.stdout + done.stderr) == [], args
    assert "x\\n::stop-commands" in done.stdout or row != "cite-key-newline-stop-commands"  # shown, escaped


def test_annotation_properties_cannot_be_forged_by_a_file_name(pytester: pytest.Pytester) -> None:
    require_tool("pdflatex")
    (pytester.path / ".git").mkdir()
    name = "a,line=999,title=x"
    (pytester.path / f"{name}.tex").write_text(plain(doc("Hello \\undefinedmacroxyz.")))
    result = pytester.runpytest_subprocess("--patchwrite-annotations")
    annotations = [ln for ln in result.stdout.lines if ln.startswith("::error ")]
    assert annotations, result.stdout.str()
    for ln in annotations:  # as GitHub reads it: `::error PROPERTIES::MESSAGE`, properties split at `,`
        properties = dict(p.split("=", 1) for p in ln[len("::error ") :].split("::", 1)[0].split(","))
        assert set(properties) == {"file", "line"} and properties["line"] == "3", ln
        assert properties["file"].replace("%2C", ",") == f"{name}.tex"


def test_a_file_name_cannot_print_a_workflow_command_through_pytest(pytester: pytest.Pytester) -> None:
    # pytest prints node ids raw (failure header, FAILED summary): the collector's node id is escaped
    require_tool("pdflatex")
    (pytester.path / ".git").mkdir()
    name = "n\n::stop-commands::X\n::error file=a::pwned"
    (pytester.path / f"{name}.tex").write_text(plain(doc("Hello \\undefinedmacroxyz.")))
    result = pytester.runpytest_subprocess("--patchwrite-annotations", "-rA")
    out = result.stdout.lines
    assert any("compile" in ln and ln.startswith("FAILED ") for ln in out), result.stdout.str()
    assert not [ln for ln in out if ln.startswith("::") and not ln.startswith("::error file=n\\n%3A%3A")], out
    assert any("n\\n::stop-commands::X" in ln for ln in out)  # shown, escaped


@pytest.mark.parametrize("mode", ["head", "base"])
def test_evidence_the_change_wrote_itself(mode: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    paper = repo / "paper"
    paper.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (paper / "main.tex").write_text("% !patchwrite log = results.json\n" + _tex("Accuracy was 91.4\\%."))
    (paper / "results.json").write_text('{"acc": 0.914}\n')
    (paper / "refs.bib").write_text(REFS)
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=T"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    # the pull request: a better number, and the log value that "attests" it
    (paper / "main.tex").write_text("% !patchwrite log = results.json\n" + _tex("Accuracy was 99.1\\%."))
    (paper / "results.json").write_text('{"acc": 0.914,\n "acc_v2": 0.991}\n')
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    done = _patchwrite(paper, env, "diff", "main.tex", "--base", "main", "--evidence-from", mode, "--json")
    failures = json.loads(done.stdout)["violations"]
    found = [(v["kind"], v["token"], v["severity"]) for v in failures]
    assert ("attested_by_change", "99.1\\%", "warning" if mode == "head" else "error") in found, found
    assert "results.json:2" in next(v["message"] for v in failures if v["kind"] == "attested_by_change")
    assert done.returncode == (0 if mode == "head" else 1), done.stdout[-2000:]
