"""ARCHITECTURE.md's layer table holds for the code: imports flow one way, modules stay small.

The table is read from ARCHITECTURE.md itself (the `## Layers` section), so the picture and the code cannot drift
apart: a new module must be put in a layer, a module that moved must be moved there too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

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
    "manuscript.py": "the snapshot's core; not split while the snapshot and integrity work edit it (issue 22)",
    "plugin.py": "the pytest hooks of one plugin; a split of its item classes is left open (issue 22)",
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
    bib = "from . import envfaults\nfrom . import sandbox\nimport subprocess\n"
    gate = "from __future__ import annotations\n\ndef f():\n    from ..check import CheckOptions\n"
    wrong = _wrong_imports(_table(), {"pytest_patchwrite.bib": bib, "pytest_patchwrite.gates.evidence": gate})
    assert wrong == [
        "pytest_patchwrite/bib.py:2: snapshot module imports pytest_patchwrite.sandbox (engine)",
        "pytest_patchwrite/bib.py:3: snapshot module imports subprocess, which starts processes (engine only)",
        "pytest_patchwrite/gates/evidence.py:4: gates module imports pytest_patchwrite.check (flows)",
    ]


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in MODULES.values()}
    long = {rel: n for rel, n in sizes.items() if n > MAX_LINES and rel not in LONG_MODULES}
    assert not long, f"over {MAX_LINES} lines (split out a second concern, see ARCHITECTURE.md): {long}"
    shorter = [rel for rel in LONG_MODULES if sizes.get(rel, 0) <= MAX_LINES]
    assert not shorter, f"no longer long, take them off LONG_MODULES: {shorter}"
