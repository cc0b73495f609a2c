"""The 24 mini-articles of the paper's oracle stress test, generated deterministically."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

BUILDS = ("surrogate", "ctex")
LAYERS_LINE = "The encoder uses 12 layers and a frozen tokenizer~\\cite{smith2020}."
FAKE_KEY = "fake2024"
HALLUCINATED_KEY = "hallucinated2024"

# (id, title, Chinese title for the ctex build or None, topic used in the prose)
_SPECS = [
    ("en_vision_01", "Patch-Level Robustness in Vision Encoders", None, "vision encoders"),
    ("en_nlp_02", "Instruction Tuning Without Answer Leakage", None, "instruction tuning"),
    ("en_speech_03", "Streaming ASR with Delayed Token Loss", None, "streaming speech recognition"),
    ("en_ir_04", "Two-Tower Retrieval with Hard Negatives", None, "dense retrieval"),
    ("en_graph_05", "Message Passing with Residual Gates", None, "graph neural networks"),
    ("en_optim_06", "Adaptive Clipping for Noisy Gradients", None, "private optimisation"),
    ("en_rl_07", "Offline RL with Conservative Q Backup", None, "offline reinforcement learning"),
    ("en_bio_08", "Variant Effect Prediction on Sparse Panels", None, "variant effect prediction"),
    ("en_vision_09", "Dense Captioning with Region-Level Losses", None, "dense captioning"),
    ("en_mt_10", "Non-Autoregressive Translation with Latent Alignment", None, "machine translation"),
    ("en_speech_11", "Self-Supervised Speech Tokens for Speaker ID", None, "speaker identification"),
    ("en_chem_12", "Graph Networks for Reaction Yield Prediction", None, "reaction yield prediction"),
    ("en_legal_13", "Long-Context Retrieval for Case Law", None, "legal retrieval"),
    ("en_geo_14", "Satellite Time Series for Crop Mapping", None, "crop mapping"),
    ("en_hci_15", "Gaze-Aware Interface Adaptation", None, "adaptive interfaces"),
    ("en_sec_16", "Membership Inference on Fine-Tuned LLMs", None, "membership inference"),
    ("zh_med_09", "Variant Effect Prediction", "变异效应预测", "variant effect prediction"),
    ("zh_edu_10", "Retrieval Augmented Classroom QA", "检索增强的课堂问答", "classroom question answering"),
    ("zh_ts_11", "Contrastive Pretraining for Industrial Time Series", "面向工业时间序列的对比预训练",
     "industrial time series"),
    ("zh_thesis_12", "Compile-Gated Scholarly Revision", "编译门控的学术修订", "scholarly revision"),
    ("zh_legal_13", "Legal Judgment Prediction", "法律判决预测", "legal judgment prediction"),
    ("zh_geo_14", "Crop Mapping from Satellite Series", "基于卫星序列的作物制图", "crop mapping"),
    ("zh_fin_15", "Contrastive Learning for Credit Risk", "面向信用风险的对比学习", "credit risk"),
    ("zh_thesis_16", "Compile-Gated Editing for CJK Theses", "面向中日韩学位论文的编译门控编辑", "thesis editing"),
]  # fmt: skip


@dataclass(frozen=True)
class CorpusDocument:
    """One mini-article: its id, title, language and the numbers its log attests."""

    id: str
    title: str
    title_zh: str | None
    topic: str
    accuracy: str
    baseline: str
    epochs: int
    batch: int

    @property
    def language(self) -> str:
        """Return `en` or `zh` (the Chinese-venue surrogates)."""
        return self.id.split("_", 1)[0]

    def results_line(self) -> str:
        """Return the Results sentence whose numbers and citation the faults target."""
        return f"Accuracy was {self.accuracy} compared with the baseline {self.baseline}~\\cite{{lee2019}}."

    def head(self, build: str = "surrogate") -> str:
        """Return the pre-fault HEAD text of the root file."""
        if build not in BUILDS:
            raise ValueError(f"unknown corpus build {build!r}; use {' or '.join(BUILDS)}")
        ctex = build == "ctex" and self.title_zh is not None
        # magic comments first: they only count above the first line that is not a comment
        magic = ["% !TEX program = xelatex"] if ctex else []
        documentclass = "\\documentclass{ctexart}" if ctex else "\\documentclass{article}"
        intro = (
            f"本文研究{self.title_zh}问题，并给出可复现的实验。"
            if ctex
            else f"We study {self.topic} and report a reproducible experiment."
        )
        title = f"{self.title_zh}（{self.title}）" if ctex else self.title
        lines = [
            *magic,
            "% !patchwrite log = results.json, hparams.json",
            documentclass,
            "\\begin{document}",
            f"\\title{{{title}}}",
            "\\author{Anonymous}",
            "\\date{}",
            "\\maketitle",
            "\\section{Introduction}",
            intro,
            "\\section{Method}",
            LAYERS_LINE,
            f"Training ran for {self.epochs} epochs with batch size {self.batch}.",
            "\\section{Results}",
            self.results_line(),
            "These results support the method.",
            "\\begin{thebibliography}{9}",
            f"\\bibitem{{smith2020}} J. Smith. Encoders for {self.topic}. 2020.",
            f"\\bibitem{{lee2019}} M. Lee. Baselines for {self.topic}. 2019.",
            "\\end{thebibliography}",
            "\\end{document}",
        ]
        return "\n".join(lines) + "\n"

    def results_log(self) -> dict[str, object]:
        """Return the experimental log (results.json) that attests the accuracy and the baseline."""
        return {"document": self.id, "accuracy": float(self.accuracy), "baseline": float(self.baseline)}

    def hparams_log(self) -> dict[str, object]:
        """Return the hyperparameter log (hparams.json) the `po_slot_strict` condition also declares."""
        return {"layers": 12, "epochs": self.epochs, "batch_size": self.batch}


def _derive(doc_id: str, salt: str, low: float, spread: int) -> str:
    digest = int(hashlib.sha256(f"{doc_id}:{salt}".encode()).hexdigest(), 16)
    tenths = digest % spread
    if tenths % 10 == 0:
        tenths += 1  # a printed x.0 would read as an integer
    return f"{low + tenths / 10:.1f}"


def _document(spec: tuple[str, str, str | None, str]) -> CorpusDocument:
    doc_id, title, title_zh, topic = spec
    if doc_id == "en_vision_01":  # the paper's own example
        accuracy, baseline = "91.4", "68.2"
    else:
        accuracy, baseline = _derive(doc_id, "acc", 80.0, 150), _derive(doc_id, "base", 55.0, 150)
    digest = int(hashlib.sha256(doc_id.encode()).hexdigest(), 16)
    epochs = (20, 30, 40, 50)[digest % 4]
    batch = (32, 64, 128, 256)[(digest // 4) % 4]
    return CorpusDocument(doc_id, title, title_zh, topic, accuracy, baseline, epochs, batch)


DOCUMENTS: dict[str, CorpusDocument] = {spec[0]: _document(spec) for spec in _SPECS}


def select(languages: str | None = None, ids: list[str] | None = None) -> list[CorpusDocument]:
    """Return corpus documents, optionally only one language (`en`, `zh`) or some ids."""
    docs = list(DOCUMENTS.values())
    if languages:
        wanted = {part.strip() for part in languages.split(",")}
        unknown = wanted - {"en", "zh"}
        if unknown:
            raise ValueError(f"unknown corpus language(s) {', '.join(sorted(unknown))}; use en, zh")
        docs = [d for d in docs if d.language in wanted]
    if ids:
        missing = [i for i in ids if i not in DOCUMENTS]
        if missing:
            raise ValueError(f"unknown corpus document(s) {', '.join(missing)}; the ids are {', '.join(DOCUMENTS)}")
        docs = [d for d in docs if d.id in ids]
    return docs


def materialize(doc: CorpusDocument, directory: Path, build: str = "surrogate", text: str | None = None) -> Path:
    """Write the document (or `text` as its root) with its logs into `directory`; return the root path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(json.dumps(doc.results_log(), indent=2) + "\n")
    (directory / "hparams.json").write_text(json.dumps(doc.hparams_log(), indent=2) + "\n")
    root = directory / "main.tex"
    root.write_text(doc.head(build) if text is None else text, encoding="utf-8")
    return root
