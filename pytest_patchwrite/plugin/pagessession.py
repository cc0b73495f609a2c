"""`--patchwrite-pages DIR`: the changed pages of each manuscript with a `diff` item, written once by the controller."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import PatchwriteError
from ..model import Violation


def _folder(path: str, count: int, index: int) -> str:
    """Return the sub-directory of one manuscript's pages ("" when the session has one manuscript)."""
    if count == 1:
        return ""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).parent.name + "-" + Path(path).stem)
    return f"{index:02d}-{stem}"


def write_session_pages(directory: Path, verdicts: dict[str, dict[str, Any]], settings: Any) -> str:
    """Write the changed pages of each manuscript that has a `diff` verdict; return an error line, or ""."""
    from ..flows.prdiff import GitBase
    from ..pages.pagesflow import PagesOptions, check_ready, write_pages

    roots = sorted(path for path, gates in verdicts.items() if "diff" in gates)
    problems = []
    for index, path in enumerate(roots, start=1):
        changes = [Violation.from_json(c) for c in verdicts[path]["diff"]["result"].get("changes", [])]
        options = settings.options
        pages = PagesOptions(directory / _folder(path, len(roots), index), timeout=options.timeout,
                             engine=options.engine, use_cache=options.use_cache, trusted=options.trusted,
                             cache_dir=options.cache_dir)  # fmt: skip
        try:
            check_ready(pages)
            write_pages(Path(path), GitBase.open(Path(path).parent, settings.base), changes, pages)
        except PatchwriteError as exc:
            problems.append(f"patchwrite: --patchwrite-pages: {exc}")
    return "\n".join(problems)
