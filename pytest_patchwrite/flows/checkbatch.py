"""`patchwrite check` over many manuscripts at once: each root a batch job, in a local pool or on a cluster.

On one machine (`check --jobs N`) a job names the root and the worker process checks it as
`check` would. On a cluster a worker shares nothing with the client, so the job carries the
manuscript instead of a path: the bytes of the tree the local check sees (the root's git work
tree or `rootdir` when it has one, else its directory; dot-files, links that leave it and files
with a second hard link left out, as the sandbox copy leaves them out), within
`MAX_BUNDLE_BYTES`. The worker writes them into a scratch directory of its own, checks the root
there with its own caches and sandbox, and the paths of its answer are turned back into the
client's, so the verdicts, the terminal lines and the JSON are the local run's.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from dataclasses import asdict, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import EnvironmentFault, InputError, InputTooLarge, PatchwriteError
from ..files.manuscriptcopy import copy_manuscript_dir
from ..files.paths import repository_top
from ..files.tempfiles import remove_tree
from ..model import GateResult
from .batch import Done, Job, drop_scratch, run_batch, scratch
from .check import CheckOptions, check_manuscript

MAX_BUNDLE_BYTES = 64 * 1024 * 1024
#: the options a cluster job carries (paths such as `cache_dir`, `bibs` or `logs` would name the client's disk)
SENT = ("engine", "default_engine", "timeout", "max_runs", "warnings_fail", "use_cache", "numbers", "strict",
        "allow_numbers")  # fmt: skip


def check_job(root: str, options: dict[str, Any]) -> dict[str, Any]:
    """Return one root's gate results, or its input error as data (a local batch job)."""
    try:
        return {"results": check_manuscript(Path(root), CheckOptions(**options))}
    except PatchwriteError as exc:
        if isinstance(exc, EnvironmentFault):
            raise
        return {"input_error": (exc.path, exc.problem, exc.line, exc.reason)}


def bundle_job(bundle: dict[str, Any], options: dict[str, Any], run: str) -> dict[str, Any]:
    """Return one root's results checked from the bytes it carries, its paths named as on the client (a
    cluster job; `run` names this batch's scratch directory on the worker)."""
    tree = Path(tempfile.mkdtemp(prefix="tree-", dir=scratch(run)))
    try:
        top = Path(os.path.realpath(tree)) / "top"
        for rel, data in bundle["files"].items():
            if rel.startswith("/") or ".." in rel.split("/"):
                raise ValueError(f"a job's file must stay inside its tree: {rel!r}")
            target = top / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        top.mkdir(exist_ok=True)
        chosen = CheckOptions(**options, rootdir=top if bundle["shared"] else None)
        try:
            answer = check_job(str(top / bundle["root"]), asdict(chosen))
        except EnvironmentFault as exc:
            raise EnvironmentFault(rehome(exc.path, str(top), bundle["top"]), exc.cause, exc.remedy,
                                   reason=exc.reason) from None  # fmt: skip
        return rehome(answer, str(top), bundle["top"])
    finally:
        remove_tree(tree)


def rehome(value: Any, old: str, new: str) -> Any:
    """Return `value` with every path below the worker's `old` tree named below the client's `new` one."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, Path):
        return Path(str(value).replace(old, new))
    if isinstance(value, (list, tuple)):
        return type(value)(rehome(v, old, new) for v in value)
    if isinstance(value, dict):
        return {k: rehome(v, old, new) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: rehome(getattr(value, f.name), old, new) for f in fields(value) if f.init})
    return value


def pack(root: Path, rootdir: Path | None = None) -> dict[str, Any]:
    """Return the job data of one root: the bytes of the tree its check sees, the root's place in it, the
    client's path of that tree and whether it is a shared tree (a repository) above the paper's directory."""
    real = Path(os.path.realpath(root))
    paper = real.parent
    top = repository_top(paper, rootdir) or paper
    try:
        files = _read_tree(top, real.stem, paper)
    except InputTooLarge:
        if top == paper:
            raise
        top, files = paper, _read_tree(paper, real.stem, paper)  # as the sandbox copy falls back to the paper
    return {"files": files, "root": real.relative_to(top).as_posix(), "top": str(top), "shared": top != paper}


def _read_tree(top: Path, job: str, paper: Path) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="patchwrite-pack-") as tmp:
        try:
            copied = copy_manuscript_dir(top, Path(tmp), job, max_bytes=MAX_BUNDLE_BYTES,
                                         job_dir=paper.relative_to(top).as_posix())  # fmt: skip
        except InputTooLarge as exc:
            problem = f"too large to send to a cluster ({exc.problem}); check it without --cluster"
            raise InputTooLarge(top, problem) from None
        return {rel: (Path(tmp) / rel).read_bytes() for rel in copied}


def check_many(
    roots: list[Path], options: CheckOptions, jobs: int, cluster: str | None = None
) -> list[dict[str, GateResult] | PatchwriteError]:
    """Return each root's results in the input order, checked `jobs` at a time (or on the cluster), or the input
    or environment error that stopped it (to be raised where the one-by-one check would have raised it)."""
    if cluster and options.trusted:
        raise InputError("--cluster", "--trusted-input reads outside the manuscript's tree, which a cluster job "
                         "does not carry; check trusted manuscripts without --cluster")  # fmt: skip
    run = uuid.uuid4().hex
    if cluster:
        sent = {k: v for k, v in asdict(options).items() if k in SENT}
        batch = [Job(str(i), bundle_job, (pack(root, options.rootdir), sent, run)) for i, root in enumerate(roots)]
    else:
        batch = [Job(str(i), check_job, (str(root), asdict(options))) for i, root in enumerate(roots)]
    done = run_batch(batch, cluster=cluster, processes=jobs, teardown=(drop_scratch, (run,)))
    return [_unpacked(root, done[job.key], cluster) for job, root in zip(batch, roots, strict=True)]


def _unpacked(root: Path, done: Done, cluster: str | None) -> Any:
    """Return one root's results, or the error to raise in its place."""
    error = done.error
    if error is not None and not cluster:
        return error
    if isinstance(error, EnvironmentFault):
        where = f"{root} on worker {done.worker}"
        return EnvironmentFault(where, f"{error.path}: {error.cause}", error.remedy, reason=error.reason)
    if error is not None:  # the engine is missing there
        return EnvironmentFault(f"{root} on worker {done.worker}", str(error), "install TeX Live on that worker",
                                reason="engine_missing")  # fmt: skip
    if "input_error" in done.value:
        path, problem, line, reason = done.value["input_error"]
        return InputError(path, problem, line=line, reason=reason)
    return done.value["results"]
