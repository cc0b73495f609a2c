"""Run a batch of jobs: in this machine's process pool (the default) or on a Dask cluster (`--cluster ADDRESS`).

A job is one of our own module-level functions and plain data (strings, numbers, bytes, dicts,
lists): the function travels by name, never as code, and nothing a manuscript wrote is ever
run by Python. On a cluster each job is a task of Dask's distributed scheduler: a worker that
dies takes its tasks with it and the scheduler runs them again elsewhere, so the client gets
one result per job and writes each job's row once. A job that stops on the machine rather
than on the manuscript (no TeX Live, no working sandbox, a full disk: `EnvironmentFault`,
`EngineMissing`) is tried on another worker, up to `TRIES` workers, and only then reported
as an environment error with the last worker's message, never as a verdict.

`distributed` is imported inside the functions that need it, so `patchwrite --help` and
`apply` never pay for it; a missing `[cluster]` extra or an unreachable scheduler is an
environment error (exit 2) naming the address, within `CONNECT_SECONDS`.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..errors import EnvironmentFault
from ..files.tempfiles import remove_tree
from ..gates.report import EngineMissing

CLUSTER_ENV = "PATCHWRITE_CLUSTER"
CONNECT_SECONDS = 10.0
TRIES = 3  # distinct workers an environment fault is tried on before it is the job's answer
POLL_SECONDS = 0.05
WATCH_SECONDS = 5.0
LOCAL = "local"
INSTALL = 'pip install "pytest-patchwrite[cluster]"'
ENV_ERRORS = (EnvironmentFault, EngineMissing)


@dataclass(frozen=True)
class Job:
    """One job of a batch: `fn(*args)`, where `fn` is ours and `args` plain data; `key` names its row."""

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass
class Done:
    """A job's answer: its value, or the environment error that stopped it; the worker that gave it."""

    key: str
    value: Any
    worker: str
    error: BaseException | None = None
    tries: int = 1  # workers it ran on (a cluster tries an environment error elsewhere)


def _version() -> str:
    try:
        return metadata.version("pytest-patchwrite")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def cluster_address(option: str | None) -> str | None:
    """Return the scheduler address to use: `--cluster`, else `$PATCHWRITE_CLUSTER`, else None (run locally)."""
    return option or os.environ.get(CLUSTER_ENV) or None


def run_batch(
    jobs: list[Job],
    *,
    cluster: str | None = None,
    processes: int | None = None,
    inline: bool = False,
    on_done: Callable[[Done, int, int], None] | None = None,
    teardown: tuple[Callable[..., Any], tuple[Any, ...]] | None = None,
) -> dict[str, Done]:
    """Return every job's `Done` by key; `on_done(done, count, total)` is called as each one arrives.

    Locally the jobs run in a pool of `processes` (default: all cores), or one after another in this
    process when `inline` (an environment error then raises at once); on the scheduler at `cluster`
    when one is given, and then `teardown` (a function of ours and its arguments) runs once on every
    worker at the end.
    """
    if len({job.key for job in jobs}) != len(jobs):
        raise ValueError("the keys of a batch's jobs must be unique")
    if cluster:
        return _on_cluster(jobs, cluster, on_done, teardown)
    done: dict[str, Done] = {}

    def arrived(answer: Done) -> None:
        done[answer.key] = answer
        if on_done:
            on_done(answer, len(done), len(jobs))

    if inline:  # one after another, stopping at the first environment error (as a plain loop would)
        for job in jobs:
            arrived(Done(job.key, job.fn(*job.args), LOCAL))
        return done
    pool = ProcessPoolExecutor(max_workers=processes or os.cpu_count() or 1)
    try:
        futures = [pool.submit(_local_call, job.key, job.fn, job.args) for job in jobs]
        for future in as_completed(futures):
            arrived(future.result())
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C or a bug: run nothing more
        raise
    pool.shutdown(wait=True)
    return done


def _local_call(key: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> Done:
    try:
        return Done(key, fn(*args), LOCAL)
    except ENV_ERRORS as exc:
        return Done(key, None, LOCAL, exc)


def on_worker(fn: Callable[..., Any], args: tuple[Any, ...], version: str) -> tuple[str, Any, BaseException | None]:
    """Run one job on a Dask worker; return (the worker's address, the value, the environment error)."""
    from distributed import get_worker

    where = get_worker().address
    if version != _version():
        cause = f"runs pytest-patchwrite {_version()}, the client {version}"
        return where, None, EnvironmentFault(where, cause, "install one version everywhere", reason="worker_mismatch")
    try:
        return where, fn(*args), None
    except ENV_ERRORS as exc:
        return where, None, exc


def _import_distributed(address: str) -> Any:
    try:
        import distributed
    except ImportError:
        raise EnvironmentFault(address, "the cluster needs Dask's distributed scheduler, which is not installed",
                               f"{INSTALL}, or run without --cluster", reason="cluster_missing") from None  # fmt: skip
    return distributed


def connect(address: str) -> Any:
    """Return a Dask client of the scheduler at `address` that has a worker; an EnvironmentFault within
    `CONNECT_SECONDS` when the extra is missing, the scheduler cannot be reached or it has no worker."""
    distributed = _import_distributed(address)
    remedy = "start one (`dask scheduler`, `dask worker ADDRESS`) or fix --cluster / $PATCHWRITE_CLUSTER"
    try:  # a malformed address fails inside Client(), whose half-built object then waits 20 s and prints a traceback
        scheme, location = distributed.comm.parse_address(address)
        if scheme != "inproc":
            distributed.comm.parse_host_port(location)
    except ValueError as exc:
        cause = f"is not a scheduler address such as tcp://HOST:PORT ({exc})"
        raise EnvironmentFault(address, cause, remedy, reason="cluster_unreachable") from None
    try:
        client = distributed.Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        cause = f"cannot reach the Dask scheduler ({type(exc).__name__}: {exc})"
        raise EnvironmentFault(address, cause, remedy, reason="cluster_unreachable") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as exc:
        client.close()
        cause = f"the scheduler has no worker after {CONNECT_SECONDS:.0f} s ({type(exc).__name__})"
        raise EnvironmentFault(address, cause, "start `dask worker ADDRESS`", reason="cluster_unreachable") from None
    return client


def workers_of(client: Any) -> list[str]:
    """Return the addresses of the cluster's workers now."""
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def _on_cluster(
    jobs: list[Job],
    address: str,
    on_done: Callable[[Done, int, int], None] | None,
    teardown: tuple[Callable[..., Any], tuple[Any, ...]] | None,
) -> dict[str, Done]:
    distributed = _import_distributed(address)
    client = connect(address)
    run = _ClusterRun(distributed, client, jobs, on_done)
    try:
        run.drive()
    except BaseException:
        client.cancel(list(run.live), force=True)  # Ctrl-C or a bug: the cluster runs nothing more of ours
        raise
    finally:
        try:
            if teardown is not None:
                client.run(teardown[0], *teardown[1], on_error="ignore")
        finally:
            client.close()
    return run.done


class _ClusterRun:
    """One batch on a cluster: its tasks, the workers each job was tried on, the answers so far."""

    def __init__(self, distributed: Any, client: Any, jobs: list[Job], on_done: Any) -> None:
        self.distributed, self.client, self.on_done = distributed, client, on_done
        self.batch = uuid.uuid4().hex[:12]
        self.jobs = {job.key: job for job in jobs}
        self.tried: dict[str, list[str]] = {job.key: [] for job in jobs}
        self.last: dict[str, Done] = {}  # the environment error of a job's last try
        self.done: dict[str, Done] = {}
        self.live: dict[Any, str] = {}  # future -> job key
        self.only: dict[Any, list[str]] = {}  # a retry's future -> the workers it may run on
        self.pending = distributed.as_completed([self._submit(job) for job in jobs], loop=client.loop)

    def _submit(self, job: Job, workers: list[str] | None = None) -> Any:
        name = f"patchwrite-{self.batch}-{len(self.tried[job.key])}-{job.key}"
        future = self.client.submit(on_worker, job.fn, job.args, _version(), key=name, pure=False,
                                    workers=workers, allow_other_workers=False)  # fmt: skip
        self.live[future] = job.key
        if workers is not None:
            self.only[future] = workers
        return future

    def drive(self) -> None:
        """Collect every answer, polling (Ctrl-C stays prompt) and looking for retries stranded on gone workers."""
        watched = time.monotonic()
        while not self.pending.is_empty():
            ready = self.pending.next_batch(block=False) if self.pending.has_ready() else []
            for future in ready:
                self._arrived(future)
            if not ready:
                time.sleep(POLL_SECONDS)
            if time.monotonic() - watched > WATCH_SECONDS:
                watched = time.monotonic()
                self._rescue_stranded()

    def _arrived(self, future: Any) -> None:
        if future not in self.live:
            return  # a stranded retry we cancelled
        if future.status in ("lost", "pending"):
            # its answer was lost with the worker that held it, after it was reported done: the scheduler runs it
            # again, and it is collected when it is done again (reading it now would wait, or find no answer)
            self.pending.add(future)
            return
        key = self.live.pop(future)
        self.only.pop(future, None)
        answer, again = _answer(self.distributed, future, key)
        self.tried[key].append(answer.worker)
        if again:
            self.last[key] = answer
            if self._retry(key):
                return
        self._finish(answer)

    def _retry(self, key: str) -> bool:
        """Submit a job again on a worker it has not been tried on; return whether one was left to try."""
        others = [w for w in workers_of(self.client) if w not in self.tried[key]]
        if not others or len(self.tried[key]) >= TRIES:
            return False
        self.pending.add(self._submit(self.jobs[key], others))
        return True

    def _finish(self, answer: Done) -> None:
        answer.tries = len(self.tried[answer.key])
        self.done[answer.key] = answer
        if self.on_done:
            self.on_done(answer, len(self.done), len(self.jobs))

    def _rescue_stranded(self) -> None:
        """A retry restricted to workers that have all left would wait for ever: try it elsewhere, or end it."""
        now = set(workers_of(self.client))
        for future, allowed in list(self.only.items()):
            if future in self.live and not now & set(allowed):
                key = self.live.pop(future)
                del self.only[future]
                self.client.cancel([future], force=True)
                if not self._retry(key):
                    self._finish(self.last[key])


def _answer(distributed: Any, future: Any, key: str) -> tuple[Done, bool]:
    """Return one finished task's `Done` and whether another worker may try it; a task that stopped on the
    machine is an environment error (the scheduler has already retried a task whose worker died)."""
    if future.status == "finished":
        where, value, error = future.result()
        return Done(key, value, where, error), error is not None
    exc = future.exception()
    if isinstance(exc, distributed.KilledWorker):
        error = EnvironmentFault(key, f"every worker that ran it died ({exc})", "look at the workers' logs",
                                 reason="worker_died")  # fmt: skip
        return Done(key, None, "?", error), False
    if isinstance(exc, ImportError):  # the worker cannot load our function: not installed there
        cause = f"a worker cannot import the job's function ({exc})"
        error = EnvironmentFault(key, cause, f"{INSTALL} on every worker", reason="worker_mismatch")
        return Done(key, None, "?", error), False
    if exc is None or future.status == "cancelled":  # cancelled by the scheduler (a restart), not by us
        cause, remedy = f"the cluster cancelled the job ({exc or future.status})", "look at the scheduler's log"
        error = EnvironmentFault(key, cause, remedy, reason="worker_died")
        return Done(key, None, "?", error), True
    raise exc


def in_order(jobs: Iterable[Job], done: dict[str, Done]) -> list[Done]:
    """Return the answers in the jobs' order (the input order: deterministic output)."""
    return [done[job.key] for job in jobs]


def raise_first(answers: Iterable[Done], cluster: str | None) -> None:
    """Raise the first environment error among the answers: as it was raised locally, naming the job and its
    worker on a cluster."""
    for answer in answers:
        error = answer.error
        if error is None:
            continue
        if not cluster:
            raise error
        if isinstance(error, EnvironmentFault) and error.reason in ("worker_died", "worker_mismatch"):
            raise error
        cause = error.cause if isinstance(error, EnvironmentFault) else str(error)
        remedy = error.remedy if isinstance(error, EnvironmentFault) else "install TeX Live on that worker"
        reason = error.reason if isinstance(error, EnvironmentFault) else "engine_missing"
        where = f"{answer.key} on worker {answer.worker} (tried on {answer.tries} worker(s))"
        raise EnvironmentFault(where, cause, remedy, reason=reason)


def scratch(run: str) -> Path:
    """Return this machine's private scratch directory of one batch run (its verdict cache), made on first use."""
    path = Path(tempfile.gettempdir()) / f"patchwrite-batch-{run}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def drop_scratch(run: str) -> None:
    """Remove this machine's scratch directory of one batch run (a cluster's teardown)."""
    remove_tree(Path(tempfile.gettempdir()) / f"patchwrite-batch-{run}")
