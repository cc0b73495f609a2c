"""The text of a PDF the engine wrote, as a reader would search it (pypdf), read in a bounded child process.

The PDF comes from an untrusted manuscript and is parsed outside the sandbox: a few kilobytes (a
deflated form XObject of many text operations, drawn again and again) keep pypdf busy for minutes
and hundreds of megabytes. So pypdf runs in a child process of its own, isolated from the
manuscript's directory (`python -I`, run from `/`), under a wall-clock limit and an address-space
cap, with pypdf's own per-extraction limits set low. Past any of them the placeholder check falls
back to the source rules, and the report says why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MAX_PAGES = 400  # a thesis; beyond that the placeholder check falls back to the source rules
MAX_PDF_BYTES = 64 * 1024 * 1024
MAX_TEXT_CHARS = 16 * 1024 * 1024
PDF_SECONDS = 60.0  # at most; the compile gate passes its own timeout
PDF_MEMORY_BYTES = 2 << 30  # address space of the child (Python and pypdf themselves take ~150 MB)
# pypdf's own budgets (pypdf >= 6: `Configuration`), far below its defaults and far above a real paper's needs
PYPDF_LIMITS = {
    "xform_maximum_invocations_per_extraction": 500,
    "zlib_maximum_output_length": 32_000_000,
    "stream_decoding_work_maximum_length": 64_000_000,
    "stream_parsing_work_maximum_count": 1_000_000,
    "array_maximum_element_count": 50_000,
    "dictionary_maximum_element_count": 50_000,
    "image_maximum_buffer_size": 16_000_000,
}

# the child: imports pypdf only (never this package, never the manuscript's directory), prints JSON
_CHILD = r"""
import json, logging, sys, warnings
path, max_pages, max_chars, limits = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
digests = len(sys.argv) > 5
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
import pypdf
configure = getattr(pypdf, "overwrite_configuration", None)
if configure is not None:
    known = getattr(pypdf.Configuration, "__dataclass_fields__", {})
    configure(**{k: v for k, v in limits.items() if k in known})
reader = pypdf.PdfReader(path)
if len(reader.pages) > max_pages:
    print(json.dumps({"why": f"it has more than {max_pages} pages"}))
    sys.exit(0)
parts, size, marks = [], 0, []
for page in reader.pages:
    parts.append(page.extract_text() or "")
    if digests:  # what the page draws: its content stream and the streams of the images and forms it names
        import hashlib
        contents = page.get_contents()
        drawn = hashlib.sha256(contents.get_data() if contents is not None else b"").hexdigest()
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        h = hashlib.sha256()
        for name in sorted(xobjects)[:200]:
            h.update(name.encode() + b"\0" + xobjects[name].get_object().get_data()[:1 << 24])
        marks.append(drawn + ":" + h.hexdigest())
    size += len(parts[-1])
    if size > max_chars:
        print(json.dumps({"why": f"its text is longer than {max_chars} characters"}))
        sys.exit(0)
print(json.dumps({"text": "\n".join(parts), "pages": parts, "digests": marks}))
"""


@dataclass(frozen=True)
class PdfText:
    """A PDF's text, or None with why it was not read (`note`); `pages`/`digests` per page when asked for."""

    text: str | None
    note: str = ""
    pages: tuple[str, ...] = ()
    digests: tuple[str, ...] = ()  # per page `content:images`, sha256s of its content stream and of its images/forms


def read_pdf(
    path: Path,
    *,
    seconds: float = PDF_SECONDS,
    memory_bytes: int = PDF_MEMORY_BYTES,
    max_pages: int = MAX_PAGES,
    max_bytes: int = MAX_PDF_BYTES,
    max_chars: int = MAX_TEXT_CHARS,
    digests: bool = False,
) -> PdfText:
    """Return the text of every page of `path`, read in a bounded child process, or None and why not.

    `digests`: also a digest per page of what it draws (its content stream, its images and forms)."""
    try:
        if not path.is_file():
            return PdfText(None, "there is no PDF")
        size = path.stat().st_size
    except OSError as exc:
        return PdfText(None, f"the PDF cannot be read ({exc.strerror})")
    if size > max_bytes:
        return PdfText(None, f"the PDF is larger than {max_bytes >> 20} MB")
    argv = [sys.executable, "-I", "-c", _CHILD, str(path.resolve()), str(max_pages), str(max_chars),
            json.dumps(PYPDF_LIMITS), *(["digests"] if digests else [])]  # fmt: skip
    prlimit = shutil.which("prlimit")
    if prlimit is not None:  # the cap holds for the child alone, set before it runs a line
        argv = [prlimit, f"--as={memory_bytes}:{memory_bytes}", "--core=0:0", "--", *argv]
    try:
        done = subprocess.run(argv, cwd="/", env={"LC_ALL": "C.UTF-8"}, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=max(1.0, seconds))  # fmt: skip
    except subprocess.TimeoutExpired:
        return PdfText(None, f"reading its text took longer than {seconds:g} s")
    except OSError as exc:
        return PdfText(None, f"the PDF reader could not start ({exc.strerror})")
    if done.returncode != 0:
        if b"MemoryError" in done.stderr[-4096:] or done.returncode < 0:
            return PdfText(None, f"reading its text needed more than {memory_bytes >> 20} MB")
        return PdfText(None, "pypdf cannot read it")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return PdfText(None, "pypdf cannot read it")
    text = answer.get("text")
    if text is None:
        return PdfText(None, str(answer.get("why", "pypdf cannot read it")))
    if not text.strip():
        return PdfText(None, "the PDF holds no text")
    pages, marks = answer.get("pages") or [], answer.get("digests") or []
    return PdfText(text, "", tuple(str(p) for p in pages), tuple(str(d) for d in marks))


def pdf_text(
    path: Path, max_pages: int = MAX_PAGES, max_bytes: int = MAX_PDF_BYTES, max_chars: int = MAX_TEXT_CHARS
) -> str | None:
    """Return the text of every page of `path`, or None when there is no PDF, it is too large or cannot be read."""
    return read_pdf(path, max_pages=max_pages, max_bytes=max_bytes, max_chars=max_chars).text
