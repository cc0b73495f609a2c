"""The one engine chooser (`engines.engine_and_reason`, asked once per snapshot by `snapshot.engine`).

Each case is a real manuscript tree in a temporary directory; the chooser and the snapshot's memo must give the same
engine for it, and every engine the chooser names is one the settings allow (`flows/schema.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_patchwrite.flows import schema
from pytest_patchwrite.snapshot import snapshot
from pytest_patchwrite.snapshot.engines import PDF_MODES, engine_and_reason
from pytest_patchwrite.snapshot.manuscript import load_manuscript

DOC = "\\documentclass{article}\n%s\\begin{document}\nText.\n\\end{document}\n"
FONTSPEC_STY = "\\ProvidesPackage{labfonts}\n\\RequirePackage{fontspec}\n"

CASES = [
    ("plain", {"main.tex": DOC % ""}, None),
    ("magic_lualatex", {"main.tex": "% !TEX program = lualatex\n" + DOC % ""}, "lualatex"),
    ("magic_ts_program_mixed_case", {"main.tex": "% !TeX TS-program = XeLaTeX\n" + DOC % ""}, "xelatex"),
    (
        "magic_wins_over_fontspec",
        {"main.tex": "% !TEX program = pdflatex\n" + DOC % "\\usepackage{fontspec}\n"},
        "pdflatex",
    ),
    (
        "magic_not_an_engine_falls_through",
        {"main.tex": "% !TEX program = latexmk\n" + DOC % "\\usepackage{fontspec}\n"},
        "xelatex",
    ),
    ("magic_below_the_top_does_not_count", {"main.tex": DOC % "% !TEX program = lualatex\n"}, None),
    ("fontspec", {"main.tex": DOC % "\\usepackage{fontspec}\n"}, "xelatex"),
    ("unicode_math_in_a_list", {"main.tex": DOC % "\\usepackage{amsmath,unicode-math}\n"}, "xelatex"),
    ("polyglossia_with_options", {"main.tex": DOC % "\\usepackage[quiet]{polyglossia}\n"}, "xelatex"),
    ("space_before_the_brace", {"main.tex": DOC % "\\usepackage {fontspec}\n"}, "xelatex"),
    ("ctex_class", {"main.tex": "\\documentclass[UTF8]{ctexart}\n\\begin{document}\nx\n\\end{document}\n"}, "xelatex"),
    ("luacode", {"main.tex": DOC % "\\usepackage{luacode}\n"}, "lualatex"),
    ("lualatex_beats_xelatex", {"main.tex": DOC % "\\usepackage{fontspec}\n\\usepackage{luatexja}\n"}, "lualatex"),
    ("commented_fontspec", {"main.tex": DOC % "% \\usepackage{fontspec}\n"}, None),
    ("fontspec_in_the_body_only", {"main.tex": DOC.replace("Text.", "\\verb|\\usepackage{fontspec}|") % ""}, None),
    # a `\begin{document}` in a comment does not end the preamble (it did, so this paper ran under pdflatex)
    (
        "begin_document_in_a_comment",
        {"main.tex": DOC % "% the body starts at \\begin{document} below\n\\usepackage{fontspec}\n"},
        "xelatex",
    ),
    ("adapts_to_the_engine", {"main.tex": DOC % "\\usepackage{iftex}\n\\ifXeTeX\\usepackage{fontspec}\\fi\n"}, None),
    ("latexmkrc_mode_5", {"main.tex": DOC % "", "latexmkrc": "$pdf_mode = 5;\n"}, "xelatex"),
    ("dot_latexmkrc_mode_4", {"main.tex": DOC % "", ".latexmkrc": "# $pdf_mode = 5;\n$pdf_mode = 4;\n"}, "lualatex"),
    (
        "latexmkrc_mode_1_beats_fontspec",
        {"main.tex": DOC % "\\usepackage{fontspec}\n", "latexmkrc": "$pdf_mode=1;\n"},
        "pdflatex",
    ),
    (
        "magic_beats_latexmkrc",
        {"main.tex": "% !TEX program = lualatex\n" + DOC % "", "latexmkrc": "$pdf_mode = 5;\n"},
        "lualatex",
    ),
    (
        "local_style_loads_fontspec",
        {"main.tex": DOC % "\\usepackage{labfonts}\n", "labfonts.sty": FONTSPEC_STY},
        "xelatex",
    ),
    (
        "local_class_loads_a_local_style",
        {
            "main.tex": "\\documentclass{lab}\n\\begin{document}\nx\n\\end{document}\n",
            "lab.cls": "\\LoadClass{article}\n\\RequirePackage{labfonts}\n",
            "labfonts.sty": FONTSPEC_STY,
        },
        "xelatex",
    ),
    (
        "style_outside_the_tree_is_not_read",
        {"paper/main.tex": DOC % "\\usepackage{labfonts}\n", "labfonts.sty": FONTSPEC_STY},
        None,
    ),
]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path / ("paper/main.tex" if "paper/main.tex" in files else "main.tex")


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_chooser_and_the_snapshot_agree(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    root = _tree(tmp_path, files)
    engine, reason = engine_and_reason(root, root.read_text(encoding="utf-8"))
    assert engine == expected, reason
    assert snapshot.engine(load_manuscript(root)) == (engine, reason)


def test_every_engine_the_chooser_names_is_one_the_settings_allow() -> None:
    named = {expected for _, _, expected in CASES if expected} | set(PDF_MODES.values())
    assert named <= set(schema.ENGINES)
    assert schema.DEFAULT_ENGINE == "pdflatex"


def test_a_candidate_with_heads_root_text_shares_heads_answer(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"main.tex": DOC % "\\usepackage{fontspec}\n\\input{sec}\n", "sec.tex": "Old.\n"})
    head = load_manuscript(root)
    assert snapshot.engine(head)[0] == "xelatex"
    candidate = head.derive({tmp_path / "sec.tex": "New.\n"})
    assert "engine" not in candidate.facts
    assert snapshot.engine(candidate) is head.facts["engine"]
    changed = head.derive({root: DOC % ""})
    assert snapshot.engine(changed)[0] is None


def test_local_styles_and_shared_bibliographies_are_read_once_per_snapshot(tmp_path: Path) -> None:
    """The one memo of each (`snapshot.local_styles`, `snapshot.shared_bibliographies`): asked twice, the same list."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "refs.bib").write_text("@book{k, title={T}, author={A}, year={2000}}\n", encoding="utf-8")
    root = _tree(
        tmp_path,
        {
            "paper/main.tex": DOC.replace("Text.", "\\bibliography{../refs}") % "\\usepackage{labfonts}\n",
            "paper/labfonts.sty": FONTSPEC_STY,
        },
    )
    manuscript = load_manuscript(root)
    styles = snapshot.local_styles(manuscript)
    assert styles == [FONTSPEC_STY] and snapshot.local_styles(manuscript) is styles
    shared = snapshot.shared_bibliographies(manuscript)
    assert shared == [(tmp_path / "refs.bib").resolve()] and snapshot.shared_bibliographies(manuscript) is shared
