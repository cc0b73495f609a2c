"""The TeX tree lookup: which file of the TeX installation kpsewhich finds for a name (a system `.bib`, say).

It starts a process, so it lives beside `sandbox.py` on the engine side: confined in the sandbox unless the
run is trusted. `bib.resolve_bib` is handed `find` and never starts anything itself.
"""

from __future__ import annotations

import shutil

from . import sandbox, sandboxcmd


def find(filename: str, trusted: bool = False) -> str | None:
    """Return the path kpsewhich finds for `filename` in the TeX tree (its first line), or None.

    Confined in the sandbox unless `trusted` (or no sandbox can be made); None also when kpsewhich is missing.
    """
    if not shutil.which("kpsewhich"):
        return None
    confined = not trusted and sandboxcmd.available()
    with sandbox.job_directory("kpse") as tree:
        found = sandbox.output_of("kpsewhich", ["-must-exist"], [filename], tree, confined=confined)
    if not found or not found.strip():
        return None
    return found.strip().splitlines()[0]
