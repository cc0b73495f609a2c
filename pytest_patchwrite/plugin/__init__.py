"""The pytest face: hooks, settings, hook specs, fixtures, the fault case, the bind and pages sessions, step summary.

The `pytest11` entry point names this package (the same name as before `plugin.py` moved into it); pytest loads
the hooks themselves from `plugin.py` through `pytest_plugins`.
"""

pytest_plugins = ["pytest_patchwrite.plugin.plugin"]
