"""DIR/index.html of `diff --pages`: each changed page before and after, side by side, its moved tokens beside it.

Every text on the page comes from the manuscript or its PDF (a stranger's), so all of it is
escaped, attribute values too; the page loads nothing from anywhere (a strict CSP, no script).
"""

from __future__ import annotations

import html
from pathlib import Path

from ..model import Violation

_STYLE = """body{font-family:sans-serif;margin:1em}figure{margin:0}img{max-width:100%;border:1px solid #999}
.pair{display:grid;grid-template-columns:1fr 1fr 16em;gap:1em;margin:1.5em 0;align-items:start}
ul{padding-left:1.2em}code{font-size:90%}.note{color:#555}"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _change(change: Violation, root: Path) -> str:
    try:
        where = str(Path(change.file).resolve().relative_to(root.resolve().parent))
    except (ValueError, OSError):
        where = Path(change.file).name
    return f"<li><code>{_e(where)}:{_e(change.line)}</code> {_e(change.message)}</li>"


def _side(name: str | None, label: str, alt: str) -> str:
    if name is None:
        return f"<figure><figcaption>{_e(label)}</figcaption><p class=note>(none)</p></figure>"
    image = f'<a href="{_e(name)}"><img src="{_e(name)}" alt="{_e(alt)}"></a>'
    return f"<figure><figcaption>{_e(label)}</figcaption>{image}</figure>"


def render_index(report, root: Path) -> str:  # report: pagesflow.PagesReport
    """Return the HTML of the pages report."""
    head = (
        '<!doctype html><html><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'; "
        "style-src 'unsafe-inline'\">"
        f"<title>Changed pages of {_e(root.name)}</title><style>{_STYLE}</style></head><body>"
    )
    parts = [head, f"<h1>Changed pages of {_e(root.name)}</h1>"]
    summary = (f"{len(report.shown)} changed page(s) drawn; {report.unchanged} unchanged page(s) counted, "
               f"not drawn; {report.same_pixels} drawn with the same pixels; base {report.base_pages} page(s), "
               f"change {report.pages} page(s).")  # fmt: skip
    parts.append(f"<p>{_e(summary)}</p>")
    if report.note:
        parts.append(f"<p class=note>{_e(report.note)}</p>")
    for shown in report.shown:
        title = f"page {shown.change}" if shown.change else f"base page {shown.base} (removed)"
        if shown.change and shown.base and shown.base != shown.change:
            title += f" (base page {shown.base})"
        elif shown.change and not shown.base:
            title += " (added)"
        items = "".join(_change(c, root) for c in shown.changes) or "<li class=note>no number or key moved here</li>"
        parts.append(f"<h2>{_e(title)}</h2><div class=pair>")
        parts.append(_side(shown.before, "before", f"base page {shown.base}"))
        parts.append(_side(shown.after, "after", f"page {shown.change}"))
        parts.append(f"<div><b>{_e(shown.boxes)} changed region(s)</b><ul>{items}</ul></div></div>")
    if report.unplaced:
        parts.append("<h2>Changes not seen on a drawn page</h2><ul>")
        parts.extend(_change(c, root) for c in report.unplaced)
        parts.append("</ul>")
    if report.left_out:
        parts.append("<h2>Not drawn</h2><ul>")
        parts.extend(f"<li>{_e(why)}</li>" for why in report.left_out)
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_index(report, root: Path) -> Path:
    """Write DIR/index.html for `report`; return its path."""
    path = report.directory / "index.html"
    path.write_text(render_index(report, root), encoding="utf-8")
    return path
