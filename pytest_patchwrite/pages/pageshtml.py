"""DIR/index.html of `diff --pages`: each changed page before and after, side by side, its moved tokens beside it.

Every text on the page comes from the manuscript or its PDF (a stranger's), so all of it is
escaped, attribute values too; the page loads nothing from anywhere (a strict CSP, no script).
"""

from __future__ import annotations

from pathlib import Path

from .. import shown
from ..model import Violation

_STYLE = """body{font-family:sans-serif;margin:1em}figure{margin:0}img{max-width:100%;border:1px solid #999}
.pair{display:grid;grid-template-columns:1fr 1fr 16em;gap:1em;margin:1.5em 0;align-items:start}
ul{padding-left:1.2em}code{font-size:90%}.note{color:#555}"""


def _change(change: Violation, root: Path) -> str:
    try:
        where = str(Path(change.file).resolve().relative_to(root.resolve().parent))
    except (ValueError, OSError):
        where = Path(change.file).name
    return f"<li><code>{shown.html(where)}:{shown.html(change.line)}</code> {shown.html(change.message)}</li>"


def _side(name: str | None, label: str, alt: str) -> str:
    if name is None:
        return f"<figure><figcaption>{shown.html(label)}</figcaption><p class=note>(none)</p></figure>"
    image = f'<a href="{shown.html(name)}"><img src="{shown.html(name)}" alt="{shown.html(alt)}"></a>'
    return f"<figure><figcaption>{shown.html(label)}</figcaption>{image}</figure>"


def render_index(report, root: Path) -> str:  # report: pagesflow.PagesReport
    """Return the HTML of the pages report."""
    head = (
        '<!doctype html><html><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'; "
        "style-src 'unsafe-inline'\">"
        f"<title>Changed pages of {shown.html(root.name)}</title><style>{_STYLE}</style></head><body>"
    )
    parts = [head, f"<h1>Changed pages of {shown.html(root.name)}</h1>"]
    summary = (f"{len(report.shown)} changed page(s) drawn; {report.unchanged} unchanged page(s) counted, "
               f"not drawn; {report.same_pixels} drawn with the same pixels; base {report.base_pages} page(s), "
               f"change {report.pages} page(s).")  # fmt: skip
    parts.append(f"<p>{shown.html(summary)}</p>")
    if report.note:
        parts.append(f"<p class=note>{shown.html(report.note)}</p>")
    for page in report.shown:
        title = f"page {page.change}" if page.change else f"base page {page.base} (removed)"
        if page.change and page.base and page.base != page.change:
            title += f" (base page {page.base})"
        elif page.change and not page.base:
            title += " (added)"
        items = "".join(_change(c, root) for c in page.changes) or "<li class=note>no number or key moved here</li>"
        parts.append(f"<h2>{shown.html(title)}</h2><div class=pair>")
        parts.append(_side(page.before, "before", f"base page {page.base}"))
        parts.append(_side(page.after, "after", f"page {page.change}"))
        parts.append(f"<div><b>{shown.html(page.boxes)} changed region(s)</b><ul>{items}</ul></div></div>")
    if report.unplaced:
        parts.append("<h2>Changes not seen on a drawn page</h2><ul>")
        parts.extend(_change(c, root) for c in report.unplaced)
        parts.append("</ul>")
    if report.left_out:
        parts.append("<h2>Not drawn</h2><ul>")
        parts.extend(f"<li>{shown.html(why)}</li>" for why in report.left_out)
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)


def write_index(report, root: Path) -> Path:
    """Write DIR/index.html for `report`; return its path."""
    path = report.directory / "index.html"
    path.write_text(render_index(report, root), encoding="utf-8")
    return path
