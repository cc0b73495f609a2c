"""The batch commands on a real Dask cluster: a `dask scheduler` and `dask worker` processes on 127.0.0.1.

Each worker runs in a directory of its own (its cwd, TMPDIR and cache home under tmp_path) and
shares no directory with the client, which checks its manuscripts from another one. The results
are compared with the local run's; a worker is killed with SIGKILL mid-run; a worker whose PATH
has no TeX; a scheduler that is not there; Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import EXAMPLES, require_tool

from pytest_patchwrite.corpus.stress import StressOptions, format_table, run_stress

pytestmark = pytest.mark.xdist_group("cluster")  # the processes of one cluster, on one xdist worker

REPO = Path(__file__).resolve().parent.parent
DOCS = ["en_vision_01", "zh_med_09"]  # the stress subset of test_corpus
VARYING = ("seconds", "mean_seconds", "wall_seconds", "worker")


def require_distributed() -> None:
    """Skip (or, in CI, fail) without Dask's distributed scheduler, naming the extra that brings it."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        reason = 'distributed is not installed: pip install "pytest-patchwrite[cluster]"'
        if os.environ.get("CI"):
            pytest.fail(f"CI must not skip: {reason}")
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pythonpath() -> str:
    return os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


class Cluster:
    """A scheduler and its workers, each a process of its own, stopped by `close`."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.procs: dict[str, subprocess.Popen] = {}
        port = self.address.rsplit(":", 1)[1]
        self._start("scheduler", ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", port,
                                  "--no-dashboard"], {})  # fmt: skip

    def _start(self, name: str, module_args: list[str], env: dict[str, str]) -> subprocess.Popen:
        home = self.base / name
        (home / "tmp").mkdir(parents=True)
        (home / "cache").mkdir()
        full = {**os.environ, "PYTHONPATH": _pythonpath(), "TMPDIR": str(home / "tmp"),
                "XDG_CACHE_HOME": str(home / "cache"), **env}  # fmt: skip
        full.pop("PATCHWRITE_CLUSTER", None)
        log = open(home / "log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen([sys.executable, "-m", *module_args], cwd=home, env=full, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
        log.close()
        self.procs[name] = proc
        return proc

    def add_worker(self, name: str, env: dict[str, str] | None = None) -> str:
        """Start a worker and return its address once the scheduler has it."""
        before = set(self.workers())
        self._start(name, ["distributed.cli.dask_worker", self.address, "--nthreads", "1", "--no-nanny",
                           "--no-dashboard", "--name", name, "--local-directory", str(self.base / name)],
                    env or {})  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            new = set(self.workers()) - before
            if new:
                return new.pop()
            if self.procs[name].poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"worker {name} did not join: {(self.base / name / 'log').read_text()[-2000:]}")

    def client(self):  # noqa: ANN201 - a distributed.Client
        from distributed import Client

        return Client(self.address, timeout=30, set_as_default=False)

    def workers(self) -> list[str]:
        try:
            with self.client() as client:
                return sorted(client.scheduler_info(n_workers=-1)["workers"])
        except OSError:
            return []

    def tasks_on_scheduler(self) -> int:
        with self.client() as client:
            # a lambda travels by value (cloudpickle): the scheduler cannot import this test module
            return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))

    def kill(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGKILL)
        self.procs[name].wait(timeout=30)

    def close(self) -> None:
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=20)


@pytest.fixture
def make_cluster(tmp_path: Path):
    require_tool("pdflatex")
    require_distributed()
    made: list[Cluster] = []

    def make(name: str = "cluster") -> Cluster:
        cluster = Cluster(tmp_path / name)
        made.append(cluster)
        return cluster

    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    """A scheduler and two workers for the module's comparisons with the local run."""
    require_tool("pdflatex")
    require_distributed()
    made = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        made.add_worker("worker-a")
        made.add_worker("worker-b")
        yield made
    finally:
        made.close()


def patchwrite(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    """Run the `patchwrite` command line as a user would; return the finished process."""
    full = {**os.environ, "PYTHONPATH": _pythonpath(), **(env or {})}
    return subprocess.run([sys.executable, "-m", "pytest_patchwrite.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)  # fmt: skip


def _without(value, keys=VARYING):  # noqa: ANN001, ANN202
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def _papers(work: Path) -> Path:
    """Return a folder of four manuscripts: two passing, two failing (copies of the examples, each a comment
    apart, so that none starts from another's warm state)."""
    papers = work / "papers"
    for name, source in (("a", "paper"), ("b", "broken-paper"), ("c", "paper"), ("d", "broken-paper")):
        shutil.copytree(EXAMPLES / source, papers / name)
        with open(papers / name / "main.tex", "a", encoding="utf-8") as handle:
            handle.write(f"% copy {name}\n")
    return work


def _fresh_cache(tmp_path: Path) -> dict[str, str]:
    """Return an environment with a cache home of its own (a run starts cold, as a worker's first run does)."""
    home = tmp_path / f"cache-{len(list(tmp_path.glob('cache-*')))}"
    home.mkdir()
    return {"XDG_CACHE_HOME": str(home)}


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "jobs.jsonl").read_text().splitlines()]


def test_stress_subset_on_two_workers_matches_the_local_run(cluster: Cluster, tmp_path: Path) -> None:
    local = run_stress(DOCS, StressOptions(), tmp_path / "local", workers=2)
    remote = run_stress(DOCS, StressOptions(), tmp_path / "remote", cluster=cluster.address)
    assert format_table(remote) == format_table(local)
    assert _without(remote) == _without(local)
    for name in ("slices.json",):
        assert _without(json.loads((tmp_path / "remote" / name).read_text())) == _without(
            json.loads((tmp_path / "local" / name).read_text())
        )
    local_rows, remote_rows = _rows(tmp_path / "local"), _rows(tmp_path / "remote")
    assert _without(remote_rows) == _without(local_rows)  # the same rows, in the same order
    assert {r["worker"] for r in local_rows} == {"local"}
    assert {r["worker"] for r in remote_rows} == set(cluster.workers())  # both workers ran jobs, each row names one


def test_a_folder_of_papers_checked_on_the_cluster_is_the_local_check(cluster: Cluster, tmp_path: Path) -> None:
    work = _papers(tmp_path)
    seq = patchwrite("check", "--json", "--no-cache", "papers", cwd=work, env=_fresh_cache(tmp_path))
    par = patchwrite("check", "--json", "--no-cache", "--jobs", "2", "papers", cwd=work, env=_fresh_cache(tmp_path))
    remote = patchwrite("check", "--json", "--no-cache", "--cluster", cluster.address, "papers", cwd=work)
    assert seq.returncode == par.returncode == remote.returncode == 1, remote.stderr
    expected = _without(json.loads(seq.stdout))
    assert [m["path"] for m in expected["manuscripts"]] == [f"papers/{n}/main.tex" for n in "abcd"]
    assert _without(json.loads(par.stdout)) == expected
    assert _without(json.loads(remote.stdout)) == expected  # paths named as on the client, not the worker's
    assert str(work / "papers" / "a" / "refs.bib") in remote.stdout
    # the terminal lines too, but for the compile's seconds
    text = [patchwrite("check", "--no-cache", *extra, "papers", cwd=work, env=_fresh_cache(tmp_path)).stdout
            for extra in ([], ["--cluster", cluster.address])]  # fmt: skip
    assert re.sub(r"\d+\.\d+ s", "T s", text[1]) == re.sub(r"\d+\.\d+ s", "T s", text[0])
    for worker in cluster.base.glob("worker-*"):
        assert not list((worker / "tmp").glob("patchwrite-batch-*"))  # each batch's scratch removed at its end


def test_a_worker_killed_mid_run_loses_no_job_and_counts_none_twice(make_cluster, tmp_path: Path) -> None:
    cluster = make_cluster()
    cluster.add_worker("steady")
    doomed = cluster.add_worker("doomed")
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "stress", "--out", str(tmp_path / "out"), "--docs",
           DOCS[0], "--cluster", cluster.address, "--progress"]  # fmt: skip
    run = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen_doomed = 0
    lines = []
    assert run.stderr is not None
    for line in run.stderr:
        lines.append(line)
        seen_doomed += f" on {doomed}:" in line
        if seen_doomed >= 3:
            cluster.kill("doomed")
            break
    stdout, rest = run.communicate(timeout=600)
    lines += rest.splitlines(keepends=True)
    assert run.returncode == 0, "".join(lines)
    assert seen_doomed >= 3, "the doomed worker ran too few jobs before the end"
    counted = [line for line in lines if line.startswith("[")]
    assert len(counted) == 40 and counted[-1].startswith("[40/40]"), "".join(lines)
    rows = _rows(tmp_path / "out")
    keys = [(r["doc"], r["fault"], r["condition"]) for r in rows]
    assert len(keys) == 40 and len(set(keys)) == 40
    assert {r["worker"] for r in rows} <= {doomed, *cluster.workers()}
    assert sum(r["worker"] == doomed for r in rows) >= 3  # what it finished before it died is kept, once
    local = run_stress(DOCS[:1], StressOptions(), tmp_path / "local", workers=2)
    assert "40 jobs" in stdout and format_table(local) in stdout
    assert _without(_rows(tmp_path / "out")) == _without(_rows(tmp_path / "local"))


def _path_without_tex(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin-without-tex"
    bin_dir.mkdir()
    for tool in ("bwrap", "git"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def test_a_worker_without_tex_gives_environment_errors_never_verdicts(make_cluster, tmp_path: Path) -> None:
    work = _papers(tmp_path)
    cluster = make_cluster()
    texless = cluster.add_worker("texless", {"PATH": _path_without_tex(tmp_path)})
    cluster.add_worker("good")
    expected = patchwrite("check", "--json", "--no-cache", "papers", cwd=work, env=_fresh_cache(tmp_path))
    mixed = patchwrite("check", "--json", "--no-cache", "--cluster", cluster.address, "papers", cwd=work)
    # what failed on the worker without TeX ran again on the other one: the local verdicts
    assert mixed.returncode == 1, mixed.stderr
    assert _without(json.loads(mixed.stdout)) == _without(json.loads(expected.stdout))
    cluster.kill("good")
    deadline = time.monotonic() + 30
    while cluster.workers() != [texless] and time.monotonic() < deadline:
        time.sleep(0.2)
    alone = patchwrite("check", "--json", "--cluster", cluster.address, "papers", cwd=work)
    assert alone.returncode == 2, alone.stdout + alone.stderr
    first = json.loads(alone.stdout)["manuscripts"]
    assert len(first) == 1 and first[0]["gates"] == {}  # no verdict: an error where the check stopped
    assert texless in first[0]["error"]["cause"] and "pdflatex is not installed" in first[0]["error"]["cause"]
    assert "environment error" in alone.stderr and texless in alone.stderr
    stress = patchwrite("stress", "--out", str(tmp_path / "out"), "--docs", DOCS[0], "--faults", "todo",
                        "--cluster", cluster.address, cwd=work)  # fmt: skip
    assert stress.returncode == 2 and texless in stress.stderr and "pdflatex is not installed" in stress.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


def test_a_scheduler_that_is_not_there_is_exit_2_naming_it(tmp_path: Path) -> None:
    require_distributed()
    work = _papers(tmp_path)
    address = f"tcp://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    checked = patchwrite("check", "--cluster", address, "papers", cwd=work, timeout=120)
    assert checked.returncode == 2, checked.stderr
    assert address in checked.stderr and "cannot reach the Dask scheduler" in checked.stderr
    assert "Traceback" not in checked.stderr and checked.stdout == ""
    stress = patchwrite("stress", "--out", "out", "--docs", DOCS[0], cwd=work, env={"PATCHWRITE_CLUSTER": address})
    assert stress.returncode == 2 and address in stress.stderr
    assert time.monotonic() - started < 100  # bounded connect timeout: no hang
    assert not (work / "out" / "summary.json").exists()
    for bad in ("nonsense", "tcp://host:port"):  # once a right line, then a traceback of Client.__del__ after 20 s
        malformed = patchwrite("check", "--cluster", bad, "papers", cwd=work, timeout=120)
        assert malformed.returncode == 2 and f"{bad}: is not a scheduler address" in malformed.stderr
        assert "Traceback" not in malformed.stderr and len(malformed.stderr.splitlines()) == 1


def test_without_the_extra_the_cluster_is_exit_2_naming_it(tmp_path: Path) -> None:
    work = _papers(tmp_path)
    # an interpreter that cannot import distributed, as one without the [cluster] extra
    blocked = "import sys; sys.modules['distributed'] = None; from pytest_patchwrite.cli import main; "
    code = blocked + "sys.exit(main(['check', '--cluster', 'tcp://127.0.0.1:1', 'papers']))"
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    run = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert "tcp://127.0.0.1:1" in run.stderr and "pytest-patchwrite[cluster]" in run.stderr


def test_ctrl_c_cancels_the_clusters_tasks_and_leaves_nothing_behind(cluster: Cluster, tmp_path: Path) -> None:
    client_tmp = tmp_path / "client-tmp"
    client_tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": _pythonpath(), "TMPDIR": str(client_tmp)}
    cmd = [sys.executable, "-m", "pytest_patchwrite.cli", "stress", "--out", str(tmp_path / "out"), "--docs",
           ",".join(DOCS), "--cluster", cluster.address, "--progress"]  # fmt: skip
    run = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert run.stderr is not None
    for line in run.stderr:
        if line.startswith("[3/"):
            break
    run.send_signal(signal.SIGINT)
    run.communicate(timeout=120)
    assert run.returncode == 130
    deadline = time.monotonic() + 30
    while cluster.tasks_on_scheduler() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.tasks_on_scheduler() == 0  # nothing of ours left queued or running on the cluster
    assert list(client_tmp.iterdir()) == []
    assert not (tmp_path / "out" / "summary.json").exists()


def test_an_answer_lost_with_its_worker_is_collected_when_it_runs_again(make_cluster) -> None:
    """A job reported done whose worker then dies before the client reads its answer: the scheduler runs it
    again, and the batch collects the new answer (it read no answer and stopped with exit 3 before)."""
    import threading

    import distributed

    from pytest_patchwrite.flows import batch

    cluster = make_cluster()
    cluster.add_worker("doomed")
    client = batch.connect(cluster.address)
    try:
        run = batch._ClusterRun(distributed, client, [batch.Job("job", batch._version, ())], None)
        (future,) = run.live
        deadline = time.monotonic() + 60
        while future.status != "finished" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert future.status == "finished"
        cluster.kill("doomed")  # the answer lived on the doomed worker only
        deadline = time.monotonic() + 60
        while future.status == "finished" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert future.status in ("lost", "pending")
        errors: list[BaseException] = []

        def drive() -> None:
            try:
                run.drive()
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                errors.append(exc)

        thread = threading.Thread(target=drive, daemon=True)
        thread.start()
        time.sleep(1.0)  # the batch meets the lost answer before any worker can run the job again
        steady = cluster.add_worker("steady")
        thread.join(120)
        assert not thread.is_alive() and errors == []
        answer = run.done["job"]
        assert (answer.value, answer.error, answer.worker) == (batch._version(), None, steady)
    finally:
        client.close()
