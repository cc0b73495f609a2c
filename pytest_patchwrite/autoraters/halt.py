"""The refinement halt rule: accept or revert a revision by its score, axes taken from the score files."""

from __future__ import annotations

from typing import Any

from ..errors import InputError

DECISIONS = ("accept_improved", "accept_tied_non_negative", "revert_tied_negative", "revert_decreased",
             "halt_plateau")  # fmt: skip


def read_scores(data: Any, source: str) -> tuple[float, dict[str, float]]:
    """Return (overall, {axis: score}) from `overall_score` and `axis_scores` ({axis: {score}} or numbers)."""
    if not isinstance(data, dict):
        raise InputError(source, "a score file is a JSON object with overall_score and axis_scores")
    overall = data.get("overall_score", data.get("overall"))
    if not isinstance(overall, (int, float)) or isinstance(overall, bool):
        raise InputError(source, "no numeric overall_score")
    axes: dict[str, float] = {}
    raw = data.get("axis_scores", data.get("scores", {}))
    if not isinstance(raw, dict):
        raise InputError(source, "axis_scores is not an object")
    for name, value in raw.items():
        score = value.get("score") if isinstance(value, dict) else value
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            axes[name] = float(score)
    return float(overall), axes


def decide(
    previous: Any,
    current: Any,
    streak: int = 0,
    plateau_streak: int = 3,
    plateau_delta: float = 1.0,
    sources: tuple[str, str] = ("PREV", "CURR"),
) -> dict[str, Any]:
    """Return `{"decision", "delta", "axes", "streak"}`; `streak` counts earlier accepted steps that gained < delta."""
    before, before_axes = read_scores(previous, sources[0])
    after, after_axes = read_scores(current, sources[1])
    shared = [a for a in before_axes if a in after_axes]
    if not shared:
        raise InputError(f"{sources[0]}, {sources[1]}", "the two score files share no axis; refusing to compare "
                         f"({', '.join(before_axes) or 'none'} vs {', '.join(after_axes) or 'none'})")  # fmt: skip
    delta = after - before
    axes = {a: after_axes[a] - before_axes[a] for a in shared}
    if delta > 0:
        decision = "accept_improved"
    elif delta < 0:
        decision = "revert_decreased"
    else:
        decision = "accept_tied_non_negative" if sum(axes.values()) >= 0 else "revert_tied_negative"
    accepted = decision.startswith("accept")
    new_streak = streak + 1 if accepted and delta < plateau_delta else 0
    if accepted and new_streak >= plateau_streak:
        decision = "halt_plateau"
    return {"decision": decision, "delta": delta, "axes": axes, "axis_delta_sum": sum(axes.values()),
            "streak": new_streak, "accepted": accepted}  # fmt: skip
