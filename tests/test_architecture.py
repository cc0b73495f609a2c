"""ARCHITECTURE.md's layer table holds for the code: imports flow one way, no import circle, modules stay small.

The table is read from ARCHITECTURE.md itself (the `## Layers` section), so the picture and the code cannot drift
apart: a new module must be put in a layer (in practice: in one of the folders the table names), a module that moved
must be moved there too. Every module is also named once in the code map (`## Code map`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "pytest_patchwrite"
# from the top of the table down; a module may import its own layer and those below it
LAYERS = ("faces", "flows", "gates", "snapshot", "engine", "primitives")
# side by side: reading a manuscript starts no process, and the engine side reads no manuscript
SIBLINGS = {("snapshot", "engine"), ("engine", "snapshot")}
# what starts a process, and the layers that never import it (the engine layer starts the manuscript's processes)
PROCESS_MODULES = ("subprocess", "multiprocessing")
NO_PROCESS_LAYERS = ("snapshot", "primitives")
MAX_LINES = 420
# the few modules over MAX_LINES, each with the reason it stays
LONG_MODULES = {
    "kinds.py": "data: one entry per violation kind (trigger, fix, suppression), rendered to docs/violations.md",
    "plugin/plugin.py": "the pytest hooks of one plugin; a split of its item classes is left open (issue 22)",
}


def _table() -> dict[str, str]:
    """Return {entry: layer} from ARCHITECTURE.md's layer table (entries: `x.py`, `dir/`, `dir/x.py`)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    table: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] not in LAYERS:
            continue
        for entry in re.findall(r"`([^`]+)`", cells[1]):
            assert entry not in table, f"{entry} is in two layers of ARCHITECTURE.md"
            table[entry] = cells[0]
    assert set(table.values()) == set(LAYERS), "ARCHITECTURE.md's layer table lost a layer"
    return table


def _modules() -> dict[str, Path]:
    """Return {dotted name: file} of every module of the package."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _layer(path: Path, table: dict[str, str]) -> str | None:
    """Return the layer of a module: its own entry, else that of the closest directory holding it."""
    rel = path.relative_to(PACKAGE).as_posix()
    if rel in table:
        return table[rel]
    for parent in path.relative_to(PACKAGE).parents:
        if parent != Path(".") and f"{parent.as_posix()}/" in table:
            return table[f"{parent.as_posix()}/"]
    return None


def _imports(name: str, path: Path, source: str | None = None) -> list[tuple[str, int]]:
    """Return (imported module, line) for every import of a module (`source`: its text, else its file's), in
    order, lazy and TYPE_CHECKING ones too."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, int]] = []
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                # `from . import sandbox` imports a module; `from .bib import resolve_bib` a name of one
                found.append((f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module, node.lineno))
    return sorted(found, key=lambda item: item[1])


def test_every_module_has_a_layer_and_every_entry_a_module() -> None:
    table = _table()
    missing = [str(p.relative_to(PACKAGE)) for p in MODULES.values() if _layer(p, table) is None]
    assert not missing, f"put these modules in ARCHITECTURE.md's layer table: {missing}"
    stale = [e for e in table if not (PACKAGE / e).exists()]
    assert not stale, f"ARCHITECTURE.md's layer table names modules that do not exist: {stale}"


def _wrong_imports(table: dict[str, str], sources: dict[str, str] | None = None) -> list[str]:
    """Return one line per import against the layers (`sources`: texts that stand in for some modules' files)."""
    wrong: list[str] = []
    for name, path in MODULES.items():
        layer = _layer(path, table)
        if layer is None:
            continue  # reported by the test of the table
        rank = LAYERS.index(layer)
        for imported, line in _imports(name, path, (sources or {}).get(name)):
            where = f"{path.relative_to(ROOT)}:{line}"
            if imported.split(".")[0] in PROCESS_MODULES and layer in NO_PROCESS_LAYERS:
                wrong.append(f"{where}: {layer} module imports {imported}, which starts processes (engine only)")
            target = MODULES.get(imported)
            other = _layer(target, table) if target is not None and target != path else None
            if other is not None and (LAYERS.index(other) < rank or (layer, other) in SIBLINGS):
                wrong.append(f"{where}: {layer} module imports {imported} ({other})")
    return wrong


def test_no_module_imports_a_layer_above_it() -> None:
    wrong = _wrong_imports(_table())
    assert not wrong, "imports against ARCHITECTURE.md's layers:\n" + "\n".join(wrong)


def test_the_layer_check_sees_a_wrong_import() -> None:
    """A reading module that starts a process, a gate that imports a flow: each is found, at its line."""
    bib = "from ..files import envfaults\nfrom ..engine import sandbox\nimport subprocess\n"
    gate = "from __future__ import annotations\n\ndef f():\n    from ..flows.check import CheckOptions\n"
    wrong = _wrong_imports(_table(), {"pytest_patchwrite.snapshot.bib": bib, "pytest_patchwrite.gates.evidence": gate})
    assert wrong == [
        "pytest_patchwrite/gates/evidence.py:4: gates module imports pytest_patchwrite.flows.check (flows)",
        "pytest_patchwrite/snapshot/bib.py:2: snapshot module imports pytest_patchwrite.engine.sandbox (engine)",
        "pytest_patchwrite/snapshot/bib.py:3: snapshot module imports subprocess, which starts processes (engine only)",
    ]


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in MODULES.values()}
    long = {rel: n for rel, n in sizes.items() if n > MAX_LINES and rel not in LONG_MODULES}
    assert not long, f"over {MAX_LINES} lines (split out a second concern, see ARCHITECTURE.md): {long}"
    shorter = [rel for rel in LONG_MODULES if sizes.get(rel, 0) <= MAX_LINES]
    assert not shorter, f"no longer long, take them off LONG_MODULES: {shorter}"


def _graph(sources: dict[str, str] | None = None) -> dict[str, set[str]]:
    """Return {module: the modules of the package it imports}, every import counted (lazy and TYPE_CHECKING ones)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        imported = {m for m, _ in _imports(name, path, (sources or {}).get(name)) if m in MODULES and m != name}
        graph[name] = imported
    return graph


def _folder(name: str) -> str:
    """Return the node of a module in the folder graph: its folder (`pytest_patchwrite.gates`), else itself."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or (PACKAGE / parts[-1]).is_dir() else name


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one node (Tarjan's, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for name, imported in graph.items():
        folders.setdefault(_folder(name), set()).update(_folder(m) for m in imported if _folder(m) != _folder(name))
    return folders


def test_no_import_circle() -> None:
    """No module imports its way back to itself, and no folder does (imports inside functions and under
    TYPE_CHECKING count: a circle there is a circle in the design)."""
    graph = _graph()
    assert not _circles(graph), f"import circles between modules: {_circles(graph)}"
    folders = _folder_graph(graph)
    assert not _circles(folders), f"import circles between folders: {_circles(folders)}"


def test_the_circle_check_sees_a_circle() -> None:
    """A TYPE_CHECKING import back from the engine to the snapshot closes a circle of modules and of folders."""
    back = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..snapshot.manuscript import Manuscript\n"
    snapshot_side = "from ..engine import sandbox\n"
    graph = _graph({"pytest_patchwrite.engine.texlog": back, "pytest_patchwrite.snapshot.engines": snapshot_side})
    # texlog -> manuscript, engines -> sandbox; no module circle yet, but the folders engine/ and snapshot/ close one
    assert ["pytest_patchwrite.engine", "pytest_patchwrite.snapshot"] in _circles(_folder_graph(graph))
    graph["pytest_patchwrite.snapshot.manuscript"].add("pytest_patchwrite.engine.texlog")
    assert ["pytest_patchwrite.engine.texlog", "pytest_patchwrite.snapshot.manuscript"] in _circles(graph)


def test_the_code_map_names_every_module_once() -> None:
    """Every module of the package is named once in ARCHITECTURE.md's code map, by its path."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## Code map", 1)[1].split("\n## ", 1)[0]
    named = [n for n in re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", section) if not n.startswith("tests/")]
    paths = sorted(str(p.relative_to(PACKAGE)) for p in MODULES.values())
    missing = [p for p in paths if p not in named and not p.endswith("/__init__.py")]
    assert not missing, f"name these modules in ARCHITECTURE.md's code map, by their path: {missing}"
    twice = sorted({n for n in named if named.count(n) > 1})
    assert not twice, f"ARCHITECTURE.md's code map names these modules more than once: {twice}"
    stale = sorted(set(named) - set(paths))
    assert not stale, f"ARCHITECTURE.md's code map names modules that do not exist: {stale}"


def test_the_public_names_import_from_the_package() -> None:
    """Every name in `pytest_patchwrite.__all__` (what docs/api.md imports) resolves."""
    import pytest_patchwrite

    missing = [name for name in pytest_patchwrite.__all__ if getattr(pytest_patchwrite, name, None) is None]
    assert not missing, f"pytest_patchwrite.__all__ names what it cannot give: {missing}"


# -- one way to do each thing ---------------------------------------------------------------------------------------


def _called(node: ast.AST) -> str | None:
    """Return the name a call calls (`f(...)`, `x.f(...)`: `f`), or None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _defined(node: ast.AST) -> str | None:
    """Return the name a `def` defines, or None for anything else."""
    return node.name if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _literal(node: ast.AST) -> str | None:
    """Return a string constant's text, or None for anything else."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _relpath_as_posix(node: ast.AST) -> bool:
    """Return whether a node is `Path(os.path.relpath(...)).as_posix()`, a path named from a directory."""
    if _called(node) != "as_posix" or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    inner = node.func.value
    return (
        _called(inner) == "Path"
        and isinstance(inner, ast.Call)
        and bool(inner.args)
        and (_called(inner.args[0]) == "relpath")
    )


def _escapes(node: ast.AST) -> bool:
    """Return whether a node escapes text for printing: `html.escape(...)`, `.encode("unicode_escape")` or
    `"backslashreplace"`, or a pattern of the control characters (a class spanning `\\x1f` and `\\x7f`/`\\x9f`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if node.func.attr == "escape" and not (isinstance(owner, ast.Name) and owner.id == "re"):
            return True
        arguments = [*node.args, *(k.value for k in node.keywords)]
        if node.func.attr in {"encode", "decode"} and any(
            _literal(a) in {"unicode_escape", "backslashreplace"} for a in arguments
        ):
            return True
    text = _literal(node)
    if text is None:
        return False
    return any(c in text for c in ("\x1f", "\\x1f")) and any(c in text for c in ("\x7f", "\\x7f", "\x9f", "\\x9f"))


def _encodes_text(node: ast.AST) -> bool:
    """Return whether a node is `x.encode(...)`."""
    return isinstance(node, ast.Call) and _called(node) == "encode" and isinstance(node.func, ast.Attribute)


_HASHED: set[int] = set()  # ids of the `.encode("utf-8")` calls that are the argument of a hash (filled per tree)


def _hashed(node: ast.AST) -> bool:
    """Return whether an `.encode(...)` call is hashed as it is: `hashlib.sha256(text.encode("utf-8"))`."""
    return id(node) in _HASHED


def _note_hashed(tree: ast.AST) -> None:
    """Remember the `.encode("utf-8")` calls of `tree` that a `sha256`/`sha1`/`md5`/`blake2b` call takes."""
    _HASHED.clear()
    for node in ast.walk(tree):
        if _called(node) in {"sha256", "sha1", "md5", "blake2b"} and isinstance(node, ast.Call):
            for arg in node.args:
                if (
                    _encodes_text(arg)
                    and isinstance(arg, ast.Call)
                    and [_literal(a) for a in arg.args][:1] == ["utf-8"]
                ):
                    _HASHED.add(id(arg))


#: what has one home: (what it is, the modules it may be in, what a node of it looks like)
ONE_HOME: list[tuple[str, frozenset[str], Any]] = [
    (
        "the engine chooser (`engines.engine_and_reason`; others ask `snapshot.engine`)",
        frozenset({"pytest_patchwrite.snapshot.engines", "pytest_patchwrite.snapshot.snapshot"}),
        lambda n: (
            _called(n)
            in {"engine_and_reason", "engine_from_magic", "package_engine", "preamble_engine", "latexmkrc_engine"}
        ),  # fmt: skip
    ),
    (
        "the engine chooser's reading of `% !TEX program` and of the packages that need a Unicode engine",
        frozenset({"pytest_patchwrite.snapshot.engines"}),
        lambda n: (
            (text := _literal(n)) is not None
            and (text == "tex.program" or ("fontspec" in text and ("usepackage" in text or "(?:" in text)))
        ),
    ),
    (
        "a display-path rule (`model.display_path`: where a file is, for a person; `model.relative_name`: named from "
        "the paper's directory)",
        frozenset({"pytest_patchwrite.model"}),
        lambda n: _defined(n) in {"display_path", "shown_path", "relative_name", "_rel", "_display", "_shown_path"},
    ),
    (
        "a path named from a directory by hand (call `model.relative_name`)",
        frozenset({"pytest_patchwrite.model"}),
        _relpath_as_posix,
    ),
    (
        "an escaping of printed text (call `shown.text`, `line`, `listing`, `markdown`, `sarif` or `html`)",
        frozenset({"pytest_patchwrite.shown"}),
        _escapes,
    ),
    (
        "a second `shared_bibliographies` or `local_styles` (the memo of each is in snapshot/snapshot.py)",
        frozenset({"pytest_patchwrite.snapshot.snapshot"}),
        lambda n: _defined(n) in {"shared_bibliographies", "local_styles"},
    ),
    (
        "a read of the local class and style files past the snapshot's memo (call `snapshot.local_styles`)",
        frozenset({"pytest_patchwrite.snapshot.snapshot", "pytest_patchwrite.snapshot.engines"}),
        lambda n: _called(n) == "read_local_styles",
    ),
    (
        "a text's bytes or hash by hand (call `inputs.text_bytes` or `inputs.text_digest`: one rule for lone "
        "surrogates)",
        frozenset({"pytest_patchwrite.files.inputs"}),
        lambda n: (
            _encodes_text(n)
            and (any(_literal(a) in {"surrogateescape", "surrogatepass"} for a in n.args) or _hashed(n))
        ),
    ),
    (
        "a Boundary rebuilt from a path beside the snapshot's own (`manuscript.boundary or Boundary.for_root(...)`)",
        frozenset(),
        lambda n: (
            isinstance(n, ast.BoolOp)
            and isinstance(n.op, ast.Or)
            and isinstance(n.values[0], ast.Attribute)
            and n.values[0].attr == "boundary"
            and any(_called(v) in {"for_root", "for_directory"} for v in n.values[1:])
        ),
    ),
    (
        "a Boundary made from a path (the snapshot makes its own; a gate's comes from its settings, `boundary(root)`)",
        # the snapshot; the two gates' `boundary(root)`; a directory given without a boundary to the bibliography
        # and log resolvers (tools and tests); the autoraters' reader of a root that has no snapshot
        frozenset(
            f"pytest_patchwrite.{m}"
            for m in (
                "files.paths",
                "snapshot.manuscript",
                "gates.compile",
                "gates.evidence",
                "snapshot.bib",
                "numbers.explog",
                "autoraters.sections",
            )
        ),  # fmt: skip
        lambda n: _called(n) in {"for_root", "for_directory"},
    ),
    (
        "a default timeout spelt by hand (`args.timeout or 60.0`: use `deadline.DEFAULT_TIMEOUT`, "
        "`commands.common.timeout_of`)",
        frozenset({"pytest_patchwrite.deadline"}),
        lambda n: (
            isinstance(n, ast.BoolOp)
            and isinstance(n.op, ast.Or)
            and "timeout" in ast.unparse(n.values[0])
            and any(isinstance(v, ast.Constant) and v.value in (60, 60.0) for v in n.values[1:])
        ),
    ),
    (
        "a second engine chooser",
        frozenset(),
        lambda n: _defined(n) in {"infer_engine", "needed_engine", "choose_engine", "detect_engine"},
    ),
]


def _second_homes(sources: dict[str, str] | None = None) -> list[str]:
    """Return one line per node of something with one home (`ONE_HOME`) found outside it."""
    found: list[str] = []
    for name, path in MODULES.items():
        source = (sources or {}).get(name)
        tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
        _note_hashed(tree)
        for node in ast.walk(tree):
            for what, homes, looks_like in ONE_HOME:
                if name not in homes and looks_like(node):
                    found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}: {what}")
    return sorted(found)


def test_each_thing_is_done_in_one_place() -> None:
    """No second engine chooser, display-path rule, escaping, memo or text hash (issue 28: one way each)."""
    found = _second_homes()
    assert not found, "a second copy of something that has one home:\n" + "\n".join(found)


def test_the_one_home_check_sees_a_second_copy() -> None:
    """A gate that infers the engine itself, from the magic comment, and a face with its own path rule are found,
    each at its line."""
    digest = "import hashlib\n\ndef key(text):\n    return hashlib.sha256(text.encode('utf-8')).digest()\n"
    raw = "def raw(text):\n    return text.encode('utf-8', 'surrogateescape')\n"
    hashing = (
        "a text's bytes or hash by hand (call `inputs.text_bytes` or `inputs.text_digest`: one rule for lone "
        "surrogates)"
    )
    assert _second_homes({"pytest_patchwrite.gates.verdicts": digest, "pytest_patchwrite.gates.warm": raw}) == [
        f"pytest_patchwrite/gates/verdicts.py:4: {hashing}",
        f"pytest_patchwrite/gates/warm.py:2: {hashing}",
    ]
    rebuilt = "def f(manuscript):\n    return manuscript.boundary or Boundary.for_root(manuscript.root)\n"
    assert _second_homes({"pytest_patchwrite.gates.binding": rebuilt}) == [
        "pytest_patchwrite/gates/binding.py:2: a Boundary made from a path (the snapshot makes its own; a gate's "
        "comes from its settings, `boundary(root)`)",
        "pytest_patchwrite/gates/binding.py:2: a Boundary rebuilt from a path beside the snapshot's own "
        "(`manuscript.boundary or Boundary.for_root(...)`)",
    ]
    spelt = "def run(args):\n    return args.timeout or 60.0\n"
    assert _second_homes({"pytest_patchwrite.commands.inject": spelt}) == [
        "pytest_patchwrite/commands/inject.py:2: a default timeout spelt by hand (`args.timeout or 60.0`: use "
        "`deadline.DEFAULT_TIMEOUT`, `commands.common.timeout_of`)"
    ]
    memo = "def shared_bibliographies(m):\n    return []\n"
    assert _second_homes({"pytest_patchwrite.snapshot.manuscript": memo}) == [
        "pytest_patchwrite/snapshot/manuscript.py:1: a second `shared_bibliographies` or `local_styles` (the memo of "
        "each is in snapshot/snapshot.py)"
    ]
    gate = (
        "from ..snapshot.engines import engine_from_magic\n\n"
        "def infer_engine(text):\n"
        "    return engine_from_magic(text) or ('xelatex' if 'tex.program' in text else None)\n"
    )
    face = (
        "import os\nfrom pathlib import Path\n\n"
        "def shown_path(path):\n"
        "    return Path(os.path.relpath(path)).as_posix()\n"
    )
    assert _second_homes({"pytest_patchwrite.commands.number": face}) == [
        "pytest_patchwrite/commands/number.py:4: a display-path rule (`model.display_path`: where a file is, for a "
        "person; `model.relative_name`: named from the paper's directory)",
        "pytest_patchwrite/commands/number.py:5: a path named from a directory by hand (call `model.relative_name`)",
    ]
    page = (
        "import html, re\n\n"
        "def _e(text):\n"
        "    return html.escape(re.sub(r'[\\x00-\\x1f\\x7f-\\x9f]', '?', text))\n"
        "def _k(kind):\n"
        "    return kind.encode('unicode_escape', 'replace') + re.escape(kind).encode()\n"
    )
    escaping = "an escaping of printed text (call `shown.text`, `line`, `listing`, `markdown`, `sarif` or `html`)"
    assert _second_homes({"pytest_patchwrite.pages.pageshtml": page}) == [
        f"pytest_patchwrite/pages/pageshtml.py:4: {escaping}",
        f"pytest_patchwrite/pages/pageshtml.py:4: {escaping}",
        f"pytest_patchwrite/pages/pageshtml.py:6: {escaping}",
    ]
    found = _second_homes({"pytest_patchwrite.gates.evidence": gate})
    assert found == [
        "pytest_patchwrite/gates/evidence.py:3: a second engine chooser",
        "pytest_patchwrite/gates/evidence.py:4: the engine chooser (`engines.engine_and_reason`; others ask "
        "`snapshot.engine`)",
        "pytest_patchwrite/gates/evidence.py:4: the engine chooser's reading of `% !TEX program` and of the packages "
        "that need a Unicode engine",
    ]


TESTS = ROOT / "tests"


def _test_module_imports(sources: dict[str, str] | None = None) -> list[str]:
    """Return one line per import of a test module or of conftest.py by a test module (`sources`: texts that stand
    in for some test modules' files, by file name)."""
    tests = {path.stem for path in TESTS.glob("test_*.py")}
    texts = {path.name: path.read_text(encoding="utf-8") for path in sorted(TESTS.glob("test_*.py"))}
    texts.update(sources or {})
    wrong: list[str] = []
    for name, text in sorted(texts.items()):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                imported = [node.module or ""]
            else:
                continue
            for module in imported:
                if module.split(".")[0] in tests | {"conftest"}:
                    wrong.append(f"tests/{name}:{node.lineno}: imports {module} (shared helpers: tests/support.py)")
    return wrong


def test_no_test_module_imports_another_or_conftest() -> None:
    """A test module takes shared helpers from tests/support.py and fixtures through pytest, never by importing
    another test module or conftest.py (importing one runs its module-level code and can collect its tests twice)."""
    wrong = _test_module_imports()
    assert not wrong, "\n".join(wrong)


def test_the_test_import_check_sees_a_test_module_imported() -> None:
    """A helper taken from another test module, or from conftest, inside a function too, is found at its line."""
    planted = "from support import git\nfrom test_prdiff import changes\n\ndef f():\n    from conftest import repo\n"
    assert _test_module_imports({"test_planted.py": planted}) == [
        "tests/test_planted.py:2: imports test_prdiff (shared helpers: tests/support.py)",
        "tests/test_planted.py:5: imports conftest (shared helpers: tests/support.py)",
    ]
    assert _test_module_imports({"test_planted.py": "import test_evidence as ev\n"}) == [
        "tests/test_planted.py:1: imports test_evidence (shared helpers: tests/support.py)"
    ]
