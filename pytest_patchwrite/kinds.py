"""Every violation kind: what triggers it and how to fix or suppress it.

The one source of `docs/violations.md` (rendered by `python -m pytest_patchwrite.commands.kinddoc`, checked by
tests/test_kinds.py), of `patchwrite explain KIND`, of the `help` field of JSON violations and of the
SARIF rules. A kind the code emits without an entry here fails tests/test_kinds.py.
"""

from __future__ import annotations

from dataclasses import dataclass

PAGE = "docs/violations.md"


@dataclass(frozen=True)
class Kind:
    """One violation kind's entry."""

    name: str
    group: str  # the section of the page: which check reports it
    severity: str  # "error", "warning", "error or warning" or "change"
    trigger: str
    fix: str
    suppress: str = "No comment suppresses it: fix the cause."

    @property
    def help(self) -> str:
        """Return where the entry is documented: the page and the kind's anchor."""
        return f"{PAGE}#{self.name}"

    def text(self) -> str:
        """Return the entry as plain text for `patchwrite explain`."""
        return (
            f"{self.name} ({self.group}, {self.severity})\n\n"
            f"What triggers it: {self.trigger}\n\nHow to fix it: {self.fix}\n\nSuppressing it: {self.suppress}\n\n"
            f"Documented at {self.help}\n"
        )


_NO_CITE = "`% patchwrite: ignore cite` (or `% patchwrite: ignore`) at the end of the line."
_NO_NUMBER = "`% patchwrite: ignore number` (or `% patchwrite: ignore`) on the line, or list it in `allow`."
_COMPILE = "compile"
GROUPS = {
    "edit": "The edit (`apply`, `try_patch`: the parse stage)",
    "inputs": "Reading the manuscript (any item)",
    _COMPILE: "Compile gate (the `compile` item)",
    "citations": "Citations (the `citations` item)",
    "numbers": "Numbers (the `numbers` item)",
    "placeholders": "Placeholders (the `placeholders` item)",
    "evidence": "What an edit may not change (evidence stage, `diff` item)",
    "diff": "Pull requests (the `diff` item)",
    "quality": "Autoraters (the `quality` item)",
}


def _edit(name: str, trigger: str, fix: str) -> Kind:
    return Kind(
        name, "edit", "error", trigger, fix, "Not suppressible: the reply is rejected and the file keeps its bytes."
    )


def _tex(name: str, trigger: str, fix: str) -> Kind:
    return Kind(name, _COMPILE, "error", trigger, fix)


ENTRIES: tuple[Kind, ...] = (
    _edit(
        "no_edit",
        "The reply holds no `EDIT N M` or `DELETE N M` header (or an unknown verb).",
        "Answer with exactly one fenced `EDIT N M` block or a `DELETE N M` line.",
    ),
    _edit(
        "multiple_edits",
        "More than one edit header, also a ```` ```EDIT ```` line inside a fenced body.",
        "Give exactly one edit per reply.",
    ),
    _edit(
        "bad_range",
        "Line numbers that are not ASCII integers, `N < 1`, `N > M`, a `DELETE` with a body or followed by text.",
        "Use `1 <= N <= M` in ASCII digits; write remarks before a `DELETE` header.",
    ),
    _edit("past_eof", "`M` lies beyond the file's last line.", "Take the line numbers from `patchwrite number FILE`."),
    _edit(
        "span_too_long",
        "The edit spans more than `max_span` lines (40 by default).",
        "Edit a smaller interval, or raise `--max-span` / `patchwrite_max_span`.",
    ),
    _edit("empty_replacement", "An `EDIT` whose body is empty or blank.", "Use `DELETE N M` to remove lines."),
    _edit(
        "unclosed_fence",
        "A fenced block that never closes (a truncated reply).",
        "Close the fence; raise the model's token limit if replies are cut.",
    ),
    _edit(
        "invalid_text",
        "A body line that is not text: invalid UTF-8 (or a lone surrogate through the API).",
        "Send UTF-8 text.",
    ),
    _edit(
        "fence_in_body",
        "A bare `EDIT N M` body holds a ```` ``` ```` line, which would be written into the file.",
        "Put the replacement in one fence right after the header.",
    ),
    _edit(
        "stale_revision",
        "An edit sent with a `revision` (the sha256 the MCP server's `read_numbered` returned, or "
        "`try_patch(..., revision=)`) other than the file's bytes now: someone changed the file since it was read.",
        "Read the file again (`read_numbered`) and write the edit against the lines it shows now.",
    ),
    _tex(
        "undefined_control_sequence",
        "The engine met a command nobody defined (`! Undefined control sequence.`); the token is the command.",
        "Fix the command's spelling, or load the package that defines it.",
    ),
    _tex(
        "math_mode",
        "`! Missing $ inserted.` or `Display math should end with $$`: math material outside math "
        "mode (often a `_` or `^` in prose) or an unclosed `$`.",
        "Close the math, or escape the character (`\\_`).",
    ),
    _tex(
        "unclosed_environment",
        "`\\begin{X}` ended by another `\\end` (`LaTeX Error: \\begin{quote} on input line "
        "N ended by \\end{document}`), located at the `\\begin`.",
        "Add the matching `\\end{X}`.",
    ),
    Kind(
        "unclosed_group",
        _COMPILE,
        "error or warning",
        "`(\\end occurred inside a group at level N)`: a `{` "
        "never closed. TeX only warns; we fail. A group opened by `\\bgroup`/`\\begingroup` on the line TeX names "
        "(as in the ICLR 2026 template) is a warning that fails only under strict checking.",
        "Close the brace; for a deliberate `\\bgroup`, nothing (or `\\egroup` where it should end).",
        "Not by a comment; the `\\bgroup` form is a warning already.",
    ),
    _tex(
        "unclosed_conditional",
        "`(\\end occurred when \\iffalse on line N was incomplete)` or `Incomplete \\if...`: "
        "a conditional without its `\\fi`.",
        "Add the `\\fi`.",
    ),
    _tex(
        "runaway_argument",
        "`Paragraph ended before ...` or `File ended while scanning ...`: an argument whose closing brace is missing.",
        "Close the argument's brace.",
    ),
    _tex(
        "missing_file",
        "A file the document loads is missing: a package (`File `x.sty' not found`), an image, "
        "an `\\input`, a `.bib` named in `\\bibliography` (bibtex: `couldn't open database`).",
        "Add the file to the manuscript's directory, fix its name, or install the TeX package that holds it.",
    ),
    _tex(
        "missing_include",
        "`\\include{x}` names a file that does not exist. TeX prints `No file x.tex.` and "
        "exits 0; we fail, since the chapter is missing from the PDF.",
        "Add the file or remove the `\\include`.",
    ),
    _tex(
        "capacity_exceeded",
        "`! TeX capacity exceeded`: usually an endless recursion.",
        "Find the macro that calls itself.",
    ),
    _tex(
        "latex_error",
        "A `LaTeX Error`, `Package X Error` or `Class X Error` (a package that needs XeTeX or "
        "LuaTeX under pdflatex says which magic comment fixes it).",
        "Read the message; for fontspec and friends put `% !TEX program = xelatex` on the root's first line.",
    ),
    _tex("tex_error", "Any other `! ...` error line of the engine's log.", "Read the message at the named line."),
    _tex(
        "emergency_stop",
        "`! Emergency stop.`: the engine gave up (reported only when no located error explains it).",
        "Fix the first error of the log; run the engine by hand if no other error is shown.",
    ),
    _tex(
        "fatal_error",
        "`Fatal error occurred, no output PDF file produced!` with no located error.",
        "As for `emergency_stop`.",
    ),
    _tex(
        "no_output",
        "The engine produced no pages (an empty document body).",
        "Put content between `\\begin{document}` and `\\end{document}`.",
    ),
    _tex(
        "truncated_document",
        "A run that stopped at no error never reached `\\end{document}`: the engine's record (`.fls`) shows the "
        "`.aux` opened for writing and never read back, which LaTeX's end of document always does. "
        "`\\csname @@end\\endcsname`, `\\@@end` or `\\stop` end the job there and drop the rest of the paper.",
        "Remove what ends the job early; the document ends at `\\end{document}`.",
    ),
    _tex(
        "no_pdf",
        "The engine exited without error but wrote no PDF, or one of 64 bytes or less.",
        "Check that the document typesets something.",
    ),
    _tex(
        "engine_exit",
        "The engine exited with a non-zero status (it counted an error) while its log shows no error line "
        "the parser could locate: e.g. xdvipdfmx failing under xelatex (`Error 256 (driver return code)`).",
        "Run the engine on the document and read the end of its log.",
    ),
    _tex(
        "forced_fail",
        "`\\errmessage{patchwrite-forced-fail}`: the stress harness's `patchwrite_nocompile` candidate.",
        "Remove the line.",
    ),
    _tex(
        "bib_syntax",
        "bibtex or biber could not read a `.bib` entry; located in the `.bib`.",
        "Fix the entry at the named line.",
    ),
    _tex("biber_error", "biber reported an error it gives no location for.", "Read biber's message."),
    _tex(
        "timeout",
        "The compile did not finish within `--timeout` seconds (60 by default) and was killed; the "
        "message says when it was generating bitmap fonts rather than looping. The evidence locks (our Python "
        "side) obey the same bound: stopped, each of the citations, numbers and placeholders items reports it "
        "(a manuscript of many megabytes dense with numbers).",
        "Find the endless loop, or raise `--timeout` / `patchwrite_timeout` (fonts are kept: run it again).",
    ),
    _tex(
        "sandbox_limit",
        "One of the sandbox's own limits stopped the compile: everything the job wrote (disk), the largest file "
        "(file), a process's address space (memory) or CPU time (cpu); the token names the limit and the message "
        "its value and how long the compile ran. A hostile manuscript gets this verdict, not an environment error.",
        "Find what writes or allocates so much, or raise the limit named in the message "
        "(`PATCHWRITE_SANDBOX_DISK_MB`, `_FILE_MB`, `_MEMORY_MB`, `_CPU_SECONDS`).",
    ),
    _tex(
        "rerun_limit",
        "The auxiliary files still changed after `max_runs` engine runs (cross-references that never settle).",
        "Raise `patchwrite_max_runs` / `--patchwrite-max-runs` / `check --max-runs`.",
    ),
    Kind(
        "unconfined",
        _COMPILE,
        "error",
        "No OS sandbox (bubblewrap missing or refused) and the manuscript needs what kpathsea's "
        "settings cannot hold: lualatex, biber, a `biber.conf`, file-reaching primitives (`\\directlua`, "
        "`\\pdfobj ... file`, `\\openin`, `${...}`, ...).",
        "Install bubblewrap (see Security); for your own trusted paper, `--trusted-input`.",
        "`--trusted-input` / `patchwrite_trusted_input` (never for a pull request).",
    ),
    Kind(
        "outside_tree",
        "inputs",
        "error",
        "A file the manuscript names (`\\input`, a `.bib`, a log, a glob) "
        "leads outside its tree or repository, is a dot-file or has a second hard link; it is never opened.",
        "Keep the file inside the manuscript's directory (bibliographies and logs: inside the repository).",
        "`--trusted-input` for your own trusted paper.",
    ),
    Kind(
        "missing_bib",
        "citations",
        "error",
        "A `\\bibliography`/`\\addbibresource` name found neither beside the manuscript nor by kpsewhich, "
        "or a declared bibliography (`patchwrite_bib`, `% !patchwrite bib`) that does not exist.",
        "Add the `.bib` or fix its name.",
    ),
    Kind(
        "unread_bib",
        "citations",
        "warning",
        "A bibliography declared with `% !patchwrite bib` or `patchwrite_bib` that the passing compile's bibtex or "
        "biber never read: its keys count for the cite lock, but none of them was typeset.",
        "Declare the bibliography the document uses (`\\bibliography`, `\\addbibresource`), or drop the declaration.",
    ),
    Kind(
        "bib_error",
        "citations",
        "error",
        "A `.bib` block bibtexparser cannot parse, at its line.",
        "Fix the entry's syntax.",
    ),
    Kind(
        "duplicate_entry",
        "citations",
        "warning",
        "A `.bib` entry key defined twice (bibtex and biber keep the first).",
        "Remove or rename one of them.",
        "It is a warning: it fails only under strict checking.",
    ),
    Kind(
        "unknown_cite",
        "citations",
        "error",
        "A cited key (`\\cite`-family, `\\nocite`) that no declared "
        "bibliography or `\\bibitem` defines; under biber also a key differing only in case.",
        "Add the entry to a declared `.bib`, fix the key, or declare the bibliography "
        "(`% !patchwrite bib = ...`, `patchwrite_bib`).",
        _NO_CITE,
    ),
    Kind(
        "case_mismatch",
        "citations",
        "warning",
        "Under BibTeX a cited key that differs only in case from a defined one (BibTeX resolves it, biber would not).",
        "Write the key as the `.bib` does.",
        _NO_CITE,
    ),
    Kind(
        "undefined_citation",
        "citations",
        "error",
        "The engine's log still reports an undefined citation after the last run.",
        "Define the key in a bibliography the document loads.",
        "`% patchwrite: ignore cite` (or `% patchwrite: ignore`) on a line silences the engine's warning for the "
        "keys cited on that line.",
    ),
    Kind(
        "undefined_reference",
        "citations",
        "error",
        "The engine's log still reports an undefined `\\ref` after the last run.",
        "Add the `\\label`, or fix the reference's name.",
    ),
    Kind(
        "unattested_number",
        "numbers",
        "error",
        "An empirical number (policy `decimals`: fractions, "
        "percentages, siunitx quantities; `all`: every number in prose and tables) that no declared experimental "
        "log attests (equal, equal after rounding to its printed precision, or a fraction times 100). With a "
        'bindings file: a number with no decision that no entry binds on evidence; the message says "fits no log '
        'entry" only when no entry holds the value, else it names the entries that hold it and why none was bound. '
        "A number several entries fit alike is reported so too, each entry once: the binder does not guess.",
        "Fix the number, or add the value to a declared log. With a bindings file, if an entry holds it and the number "
        "reports it, name the entry beside the number (its key's words) and run `patchwrite bind ROOT`; a setting, a "
        "cited or an unlogged number is recorded by hand: `patchwrite bind ROOT --manual FILE:LINE:TOKEN --reason "
        "setting` (or `cited`, `not_logged`, your own words), and `patchwrite bind ROOT --manual unattested --reason "
        "not_logged` records every number without a decision at once (review the file's diff).",
        _NO_NUMBER,
    ),
    Kind(
        "cited_number",
        "numbers",
        "warning",
        "In `check`, an empirical number no declared log attests, in a sentence that cites other work (a "
        "`\\cite`-family command in the same sentence, or the same table row) and prints no number the log attests: "
        "it reports the cited work's result. A number an edit (`apply`, `try_patch`, the fixtures) or a pull request "
        "(the `diff` item) adds is `unattested_number` (an error) whatever its sentence cites.",
        "Nothing, if the number is the cited work's; if it is this paper's, add it to a declared log.",
        _NO_NUMBER,
    ),
    Kind(
        "binding_mismatch",
        "numbers",
        "error",
        "With a bindings file (`patchwrite bind`), a number whose reviewed decision no longer holds: a bound number no "
        "longer equals its log entry under its transform at the printed precision (the number was changed or swapped, "
        "or the log was rerun and the paper does not follow it), or a number recorded as typed by hand "
        '(`"transform": "manual"`) is printed differently. The message names the entry and the value it '
        "prints as, in the number's own form (`which prints as 91.4\\%`), or the recorded number and its reason.",
        "Print what the log says (the paper follows its log), or put back the number you changed. If the change is "
        "meant: `patchwrite bind ROOT --update` accepts it and prints each change (`results.tex:3: 91.4\\% -> "
        "68.2\\%: results.json ours.clean_acc -> results.json baseline.clean_acc`); review and commit the bindings "
        "file's diff. `patchwrite bind ROOT` alone never changes a reviewed decision: it exits 1 on such a conflict.",
        _NO_NUMBER,
    ),
    Kind(
        "unbound_number",
        "numbers",
        "warning",
        "With a bindings file, an empirical number the file has no decision for that the binder binds on evidence: "
        "`patchwrite bind ROOT` would bind it (the message names the entry). A number several entries fit alike is "
        "no decision the binder makes: it is `unattested_number`, with the entries listed once each.",
        "Run `patchwrite bind ROOT` (it adds the new binding and keeps every other decision) and commit the file. "
        "If the entry is not the one the number reports, record the number by hand instead: `patchwrite bind ROOT "
        "--manual FILE:LINE:TOKEN --reason TEXT` (FILE:LINE:TOKEN as the finding prints it).",
        _NO_NUMBER,
    ),
    Kind(
        "stale_binding",
        "numbers",
        "warning",
        "A decision of the bindings file whose number no longer stands in the manuscript (it was removed, or its "
        "place changed so much that no number left pairs with it: none of its identity, the table, row and column "
        "or the sentence's words, none in its sentence or table, none between the same two numbers that kept their "
        "places).",
        "Run `patchwrite bind ROOT --update` to drop it (and bind what now stands there); review the file's diff.",
    ),
    Kind(
        "attested_by_change",
        "diff",
        "error or warning",
        "In the `diff` item, a number or cite key the change added is attested only by a value or entry the change "
        "itself added to a declared log or bibliography (or by a new file under a declared log glob, or by a "
        "`\\bibitem` the change added); located at the number, the message names the log line. An error under "
        "`--evidence-from base` (`patchwrite_evidence_from = base`, `--patchwrite-evidence-from base`). In `apply`, "
        "`try_patch` and the MCP `apply_edit`, a `\\bibitem` the edit adds is always an error: an edit may not write "
        "the evidence that judges it.",
        "Check that the new log value comes from a real run (a committed script, a CI artifact), not an edit made "
        "to fit the paper; gate pull requests with `base` to make the base's evidence the only evidence.",
    ),
    Kind(
        "binding_changed",
        "diff",
        "error or warning",
        "In the `diff` item, the change adds, removes or re-points a binding of the bindings file (listed at the "
        "number it binds); the number lock judges with the base's bindings. Under `evidence-from base` it is an error.",
        "Review it like a lockfile change: check that the number really reports the new entry.",
    ),
    Kind(
        "bib_changed",
        "diff",
        "error or warning",
        "In the `diff` item, the change rewrites the `.bib` entry of a key the manuscript cites (its author, title, "
        "year or any other field): every citation of the key now points at what the entry says, with no change "
        "of the text. Located at the entry, the message names the changed fields. An error under "
        "`--evidence-from base`.",
        "Review it: a corrected entry is fine; a citation re-pointed to another work is not.",
    ),
    Kind(
        "log_changed",
        "diff",
        "error or warning",
        "In the `diff` item, the change alters a declared experimental log: each bound entry whose value moved is "
        "listed at the number it binds; a changed log that moves no bound entry is listed once at the root. "
        "Under `evidence-from base` it is an error.",
        "Review it: a rerun the paper follows is fine; a log edited to fit the paper is not.",
    ),
    Kind(
        "placeholder",
        "placeholders",
        "error",
        "`TODO`, `FIXME`, `XXX`, `TBD`, `??`, `\\todo{}` or "
        "`[citation needed]` as the reader sees it (confirmed against the PDF's text when there is one).",
        "Write the text it stands for.",
        "`% patchwrite: ignore placeholder` (or `% patchwrite: ignore`).",
    ),
    Kind(
        "suppression_changed",
        "evidence",
        "error or warning",
        "A candidate adds, removes or changes a "
        "`% patchwrite: ignore` comment: an error in `apply` and `try_patch`, a warning in the `diff` item.",
        "Change suppression comments by hand, not through an edit.",
    ),
    Kind(
        "config_changed",
        "evidence",
        "error or warning",
        "A candidate adds, removes or changes a magic comment "
        "(`% !patchwrite ...`, `% !TEX ...`): an error in `apply` and `try_patch`, a warning in the `diff` item.",
        "Change the configuration by hand, not through an edit.",
    ),
    Kind(
        "hunk_too_long",
        "diff",
        "error",
        "With `patchwrite_max_hunk = N` (`--max-hunk N`), a hunk of the change rewrites more than N lines.",
        "Split the change into smaller hunks, or raise the limit.",
    ),
    Kind(
        "moved_number",
        "diff",
        "change",
        "A number the change replaced by another (listed, located at the new "
        "line; it fails the item only when the new one is unattested).",
        "Nothing, if it was meant.",
    ),
    Kind("added_number", "diff", "change", "A number the change added.", "Nothing, if it is attested."),
    Kind("removed_number", "diff", "change", "A number the change removed.", "Nothing, if it was meant."),
    Kind("moved_cite", "diff", "change", "A cite key the change replaced by another.", "Nothing, if it was meant."),
    Kind("added_cite", "diff", "change", "A cite key the change added.", "Nothing, if it is defined."),
    Kind("removed_cite", "diff", "change", "A cite key the change removed.", "Nothing, if it was meant."),
    Kind(
        "sxs_loss",
        "quality",
        "error",
        "With a judge and `--patchwrite-base`, the change loses to the base in "
        "both orders of the side-by-side judgement.",
        "Revise the change; the item prints which call said what.",
    ),
    Kind(
        "litreview_revert",
        "quality",
        "error",
        "The change rewrote the Introduction or Related Work and the "
        "halt rule reverts it: its literature-review score fell, or stayed equal with an axis that fell.",
        "Revise those sections.",
    ),
    Kind(
        "judge_error",
        "quality",
        "error",
        "The judge's reply is unreadable even after repair.",
        "Check the judge's model and server; the raw reply is kept in the cache.",
    ),
)

KINDS: dict[str, Kind] = {k.name: k for k in ENTRIES}


def help_for(kind: str) -> str | None:
    """Return the documentation anchor of a kind, None for a kind with no entry."""
    entry = KINDS.get(kind)
    return entry.help if entry else None
