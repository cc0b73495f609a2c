"""What one compile of a manuscript found (`CompileReport`, also the verdict cache's JSON), and the missing engine
the compile gate refuses to start without (`EngineMissing`, naming its Debian package).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..engine.texlog import LogMessage
from ..model import Violation


class EngineMissing(RuntimeError):
    """The TeX engine is not installed; the message names the Debian package."""


PACKAGE_OF = {
    "pdflatex": "texlive-latex-base",
    "xelatex": "texlive-xetex",
    "lualatex": "texlive-luatex",
    "bibtex": "texlive-binaries",
    "biber": "biber",
}


@dataclass
class CompileReport:
    """What one compile of a manuscript found."""

    ok: bool
    engine: str
    runs: int = 0
    seconds: float = 0.0
    pdf_bytes: int = 0
    timed_out: bool = False
    limit: str = ""  # the sandbox limit that stopped it (gates.outcomes.LIMITS), or ""
    unsettled: bool = False
    cached: bool = False
    pdf_text: str | None = None  # the PDF's text, when asked for (`extract_text`) and the compile passed
    pdf_note: str = ""  # why the PDF's text was not read, when it was asked for (pdftext: bounded)
    exit_code: int | None = None  # the last engine run's exit status (None: it never ended by itself)
    # the engine's record (gates.record), paths relative to the root's directory: the manuscript's files the
    # last run read (its .fls) and the bibliographies bibtex/biber were asked to read (\bibdata, the .bcf)
    inputs: list[str] = field(default_factory=list)
    bibliographies: list[str] = field(default_factory=list)
    typeset: list[str] = field(default_factory=list)  # of `inputs`, the files `\\input` typeset (record.py)
    cited: list[str] = field(default_factory=list)  # the keys the last run cited (its .aux/.bcf; record.py)
    # keys the job defined itself (a bibliography it wrote, REVTeX's `<job>Notes.bib`; its `\bibcite`s), and
    # whether the last run wrote the `.aux`/`.bcf` that `cited` comes from (record.job_definitions)
    defined: list[str] = field(default_factory=list)
    cites_recorded: bool = False
    start: str = "cold"  # cold, or how a warm start went (see gates.warm.Start)
    cache_rejected: int = 0  # cache entries on disk that did not verify and were ignored (gates.cachetrust)
    messages: list[LogMessage] = field(default_factory=list)
    violations: list[Violation] = field(default_factory=list)

    def warnings(self, kind: str) -> list[LogMessage]:
        """Return the warnings of one kind after the last run (e.g. `undefined_citation`)."""
        return [m for m in self.messages if m.severity == "warning" and m.kind == kind]

    def to_json(self) -> dict[str, object]:
        """Return the report as plain JSON data (used by the verdict cache)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CompileReport:
        """Return a report read back from `to_json` data."""
        data = dict(data)
        data["messages"] = [LogMessage(**m) for m in data["messages"]]
        data["violations"] = [Violation(**v) for v in data["violations"]]
        return cls(**data)
