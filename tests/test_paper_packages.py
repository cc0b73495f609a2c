"""The packages real ML papers load build in our TeX set (scripts/tex-packages.txt), inside the sandbox.

Each row is a minimal document of our own that loads what the templates and papers load
(`\\usepackage{lmodern}`, NeurIPS/ICML's microtype, booktabs, hyperref, cleveref, siunitx,
algorithms, TikZ/pgfplots; ACL's inconsolata; newtx; acmart's libertine). A row fails with
`missing_file X.sty` when the Debian package that ships X is not on the list: the list is
what CI and the Action install, so a missing one is a real user's failed compile.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import require_tool

from pytest_patchwrite.flows.check import CheckOptions, check_manuscript

LMODERN = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\begin{document}
Latin Modern, as most papers on arXiv ask for it: \textbf{bold}, \textit{italic}, \texttt{mono}.
\end{document}
"""

ML_PREAMBLE = r"""\documentclass{article}
\usepackage[utf8]{inputenc}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage{microtype}
\usepackage{amsmath,amssymb,amsthm,mathtools,bm}
\usepackage{graphicx}
\usepackage{booktabs}
\usepackage{multirow}
\usepackage{siunitx}
\usepackage[dvipsnames]{xcolor}
\usepackage{float}
\usepackage{caption}
\usepackage{subcaption}
\usepackage{enumitem}
\usepackage{listings}
\usepackage{algorithm}
\usepackage{algpseudocode}
\usepackage{tikz}
\usepackage{pgfplots}
\pgfplotsset{compat=1.16}
\usepackage{wrapfig}
\usepackage{nicefrac}
\usepackage{xspace}
\usepackage{url}
\usepackage[numbers]{natbib}
\usepackage{hyperref}
\usepackage{cleveref}
"""
ML_BODY = r"""\begin{document}
\section{Results}\label{sec:r}
\Cref{tab:a} and \cref{fig:p} hold the results of \cref{alg:a}.
\begin{table}[H]\centering\caption{Scores}\label{tab:a}
\begin{tabular}{lS}\toprule \multirow{2}{*}{ours} & 1.5 \\ & 2.25 \\ \bottomrule\end{tabular}
\end{table}
\begin{figure}[t]
\begin{subfigure}{.45\linewidth}
\begin{tikzpicture}\begin{axis}[width=4cm]\addplot coordinates {(0,0) (1,1)};\end{axis}\end{tikzpicture}
\caption{A plot}\label{fig:p}
\end{subfigure}
\end{figure}
\begin{algorithm}\caption{Training}\label{alg:a}
\begin{algorithmic}\State $\bm{\theta} \gets \mathbf{0}$\end{algorithmic}
\end{algorithm}
\begin{itemize}[noitemsep]\item \textcolor{RoyalBlue}{x} $\nicefrac{1}{2}$ \url{https://example.org}\end{itemize}
\begin{lstlisting}[language=Python]
def step(theta): return theta
\end{lstlisting}
\end{document}
"""

ALGORITHM2E = r"""\documentclass{article}
\usepackage[ruled,vlined]{algorithm2e}
\usepackage{algorithmic}
\begin{document}
\begin{algorithm}[H]\caption{Search}\KwIn{a graph}\While{not done}{expand}\end{algorithm}
\begin{algorithmic}\STATE $x \leftarrow 1$\end{algorithmic}
\end{document}
"""

# ACL's template loads inconsolata; IEEE and Springer papers often newtx; acmart needs libertine, inconsolata, newtxmath
EXTRA_FONTS = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage{newtxtext,newtxmath}
\usepackage{inconsolata}
\begin{document}
Times-like text, $\alpha + \beta = \gamma$, and \texttt{inconsolata code}.
\end{document}
"""
ACMART = r"""\documentclass[sigconf]{acmart}
\settopmatter{printacmref=false}
\setcopyright{none}
\begin{document}
\title{A Paper}
\author{A. Author}
\affiliation{\institution{A University}\country{Nowhere}}
\maketitle
\section{Introduction}
Text in Linux Libertine, \texttt{code in inconsolata}.
\end{document}
"""

DOCUMENTS = {
    "lmodern": LMODERN,
    "ml_paper_packages": ML_PREAMBLE + ML_BODY,
    "algorithm2e_and_algorithmic": ALGORITHM2E,
    "newtx_and_inconsolata": EXTRA_FONTS,
    "acmart_sigconf": ACMART,
}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_packages_real_papers_load_compile_clean(name: str, tmp_path: Path) -> None:
    require_tool("pdflatex")
    root = tmp_path / "main.tex"
    root.write_text(DOCUMENTS[name])
    results = check_manuscript(root, CheckOptions(use_cache=False))
    compile_result = results["compile"]
    # a missing package reads `missing_file lmodern.sty`: the Debian package that ships it belongs on the list
    assert compile_result.ok and not compile_result.violations, [v.format() for v in compile_result.violations]
    assert results["placeholders"].ok and results["citations"].ok
