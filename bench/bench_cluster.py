"""Benchmark: the batch runner on this machine and on a Dask cluster, measured in one run.

    python bench/bench_cluster.py [--papers 8]

Prints, beside the load average (the machine may be shared):
- the stress subset of tests/test_corpus.py (2 manuscripts x 8 faults x 5 conditions, 80 jobs)
  with `-j 1`, on a Dask cluster of 1 worker and of 2 workers (one thread each, processes on this
  machine): walls, jobs per second, the 2-worker/`-j 1` throughput ratio (target >= 1.6 on two
  cores) and the scheduler's overhead per job (1 worker against `-j 1`);
- the scheduler's own cost per task: 400 empty tasks through the same runner on 2 workers;
- `patchwrite check --jobs 2` over N papers against the one-by-one check (fresh caches each);
- on paper, the throughput 100 workers would give from the measured job time and overheads.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.corpus.stress import StressOptions, run_stress
from pytest_patchwrite.flows.batch import Job, run_batch

DOCS = ["en_vision_01", "zh_med_09"]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def stress_wall(cluster: str | None = None) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_stress(DOCS, StressOptions(), Path(out), workers=1, cluster=cluster)
        return time.perf_counter() - started, int(summary["n_jobs"])


def on_cluster(workers: int):  # noqa: ANN201 - a distributed.LocalCluster
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")


def empty_tasks(address: str, n: int) -> float:
    """Return the seconds per task of `n` tasks that do nothing (the scheduler's and the client's own cost)."""
    jobs = [Job(str(i), os.getpid, ()) for i in range(n)]
    started = time.perf_counter()
    run_batch(jobs, cluster=address)
    return (time.perf_counter() - started) / n


def check_wall(work: Path, jobs: int) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=work)}  # cold: no verdict, no warm state
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", "check", "--jobs", str(jobs), "papers"],
                         cwd=work, env=env, capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    if run.returncode not in (0, 1):
        raise SystemExit(f"check failed: {run.stderr}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=8)
    args = parser.parse_args()
    print(f"start: {load()} on {os.cpu_count()} cores")
    local, n = stress_wall()
    print(f"stress subset ({n} jobs), -j 1:           {local:7.1f} s  {n / local:5.2f} jobs/s   ({load()})")
    with on_cluster(1) as one:
        single, _ = stress_wall(one.scheduler_address)
    print(f"stress subset, cluster of 1 worker:     {single:7.1f} s  {n / single:5.2f} jobs/s   ({load()})")
    with on_cluster(2) as two:
        double, _ = stress_wall(two.scheduler_address)
        print(f"stress subset, cluster of 2 workers:    {double:7.1f} s  {n / double:5.2f} jobs/s   ({load()})")
        per_task = empty_tasks(two.scheduler_address, 400)
    overhead = (single - local) / n
    print(f"throughput, 2 workers / -j 1:           {local / double:7.2f} x (target >= 1.6)")
    print(f"overhead per job, 1 worker vs -j 1:     {overhead * 1000:7.1f} ms")
    print(f"empty task through the runner:          {per_task * 1000:7.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i in range(args.papers):
            source = EXAMPLES / ("paper" if i % 2 == 0 else "broken-paper")
            shutil.copytree(source, work / "papers" / f"p{i}")
            with open(work / "papers" / f"p{i}" / "main.tex", "a", encoding="utf-8") as handle:
                handle.write(f"% copy {i}\n")  # distinct bytes: no paper starts from another's warm state
        one_by_one = check_wall(work, 1)
        paired = check_wall(work, 2)
    print(f"check {args.papers} papers, one by one:       {one_by_one:7.1f} s")
    print(f"check {args.papers} papers, --jobs 2:          {paired:7.1f} s  ({one_by_one / paired:.2f} x)   ({load()})")
    job = local / n
    # a cluster's rate: each worker turns a job around in job + overhead seconds; the client and the scheduler
    # hand out one task every `per_task` seconds at best (measured on 2 workers: an upper bound of their cost)
    workers = 100 / (job + max(overhead, 0.0))
    dispatch = 1 / per_task
    print(f"on paper, 100 workers: min({workers:.0f} jobs/s by the workers, {dispatch:.0f} jobs/s by the "
          f"scheduler) = {min(workers, dispatch):.0f} jobs/s; the full 960-job table in "
          f"{960 / min(workers, dispatch):.1f} s")  # fmt: skip
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
