"""Autoraters: Citation F1, side-by-side judgments, literature-review scores and the halt rule (import submodules)."""
