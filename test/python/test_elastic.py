"""Elastic training (kiln.distributed.elastic under kiln-launch --nproc
MIN:MAX): workers killed between steps, during the gradient all-reduce and
during a commit, a worker joining, a worker started again, and the store
missing or going away. Every run is real processes that meet through a
store; the final parameters are checked against a replay, in numpy, of the
same sequence of run sizes (each step's global batch split into as many
blocks as the run had workers at that step, the blocks' gradients
averaged)."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
WORKER = os.path.join(HERE, "workers", "elastic_worker.py")
sys.path.insert(0, os.path.join(HERE, "workers"))
import elastic_worker  # noqa: E402  (the worker's data and constants)


def launcher():
    path = os.path.join(os.environ.get("KILN_BIN_DIR", ""), "kiln-launch")
    if not os.path.exists(path):
        pytest.skip("kiln-launch not built (KILN_BIN_DIR)")
    return path


def launch(nproc, out, *worker_args, local=None, restarts=None, store=None,
           run_id=None, env=None, wait=True, timeout=240, command=None):
    cmd = [launcher(), "--nproc", nproc]
    if local is not None:
        cmd += ["--local", str(local)]
    if restarts is not None:
        cmd += ["--max-restarts", str(restarts)]
    if store is not None:
        cmd += ["--store", store, "--run-id", run_id or "elastic-test",
                "--hostname", "127.0.0.1"]
    cmd += ["--"] + (command or [sys.executable, WORKER, str(out)])
    cmd += [str(a) for a in worker_args]
    # A dead worker is noticed at once (its sockets close); the timeout is
    # for hung ones, and on a loaded host a live worker's collective can
    # stall past the default 5 s. The test of hung workers sets its own.
    environment = dict(os.environ)
    environment.setdefault("KILN_ELASTIC_TIMEOUT", "30")
    environment.update(env or {})
    if not wait:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env=environment)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=environment)
    if "cannot load the Gloo plug-in" in r.stdout + r.stderr:
        pytest.skip("the Gloo plug-in is not built (apt-get install "
                    "libgloo-dev libhiredis-dev, then reconfigure)")
    return r


def replay(sizes):
    """The parameters after len(sizes) steps, step s split over sizes[s]
    workers as data-parallel training splits it."""
    steps = len(sizes)
    x, y = elastic_worker.data(steps)
    b = elastic_worker.BATCH
    w = np.zeros(elastic_worker.DIM)
    v = np.zeros(elastic_worker.DIM)
    for s, n in enumerate(sizes):
        xs, ys = x[s * b:(s + 1) * b], y[s * b:(s + 1) * b]
        grads = [2 * xb.T @ (xb @ w - yb) / len(yb)
                 for xb, yb in zip(np.split(xs, n), np.split(ys, n))]
        v = elastic_worker.MOMENTUM * v + np.mean(grads, axis=0)
        w = w - elastic_worker.LR * v
    return w, v


def wait_for_step(run, progress, step, timeout=180):
    """Waits until the run `run` started with --progress PROGRESS has
    committed step STEP: a launcher started after it meets a run under
    way, however slowly the host started the first one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run.poll() is not None:
            pytest.fail("the run ended before step %d:\n%s"
                        % (step, run.communicate()[0]))
        try:
            if int(progress.read_text()) >= step:
                return
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.05)
    run.kill()
    pytest.fail("the run did not reach step %d within %d s:\n%s"
                % (step, timeout, run.communicate()[0]))


def check_result(out, steps, expect_sizes):
    """The run took every step once, in order, and its parameters are the
    replay's; its sizes are those expected (a list, or a predicate)."""
    result = json.loads((out / "result.json").read_text())
    assert result["step"] == steps
    assert result["position"] == steps * elastic_worker.BATCH
    sizes = result["sizes"]
    assert len(sizes) == steps
    if callable(expect_sizes):
        assert expect_sizes(sizes), sizes
    else:
        assert sizes == expect_sizes
    w, v = replay(sizes)
    np.testing.assert_allclose(result["w"], w, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(result["v"], v, rtol=1e-6, atol=1e-12)
    return sizes


@pytest.fixture
def redis_store(tmp_path):
    """A redis-server of this test's own on a free port."""
    server = shutil.which("redis-server")
    if not server:
        pytest.skip("redis-server not found (apt-get install redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    yield process, f"redis://127.0.0.1:{port}"
    process.kill()
    process.wait()


@pytest.mark.parametrize("kill", ["1:5:between", "2:5:allreduce",
                                  "0:6:commit"])
def test_a_killed_worker_leaves_the_run_to_the_others(tmp_path, kill):
    steps = 10
    r = launch("2:3", tmp_path, "--steps", steps, "--kill", kill, "--marker",
               tmp_path / "marker")
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "killed by signal 9" in log and "goes on without it" in log, log
    assert "failed" in log and "back to commit" in log, log
    rank, step, where = kill.split(":")
    sizes = check_result(
        tmp_path, steps,
        lambda s: s[0] == 3 and s[-1] == 2 and s == sorted(s, reverse=True))
    # The survivors went back to the commit at or before the kill; a step
    # whose all-reduce the victim completed before it died is a step of 3.
    assert sizes.count(3) <= int(step) + (where == "allreduce")


def test_a_hung_worker_is_noticed_within_the_timeout(tmp_path):
    """A worker that stops (SIGSTOP) before step 5: the others give up on it
    after KILN_ELASTIC_TIMEOUT and go on without it; let go once the run
    has finished, it leaves cleanly."""
    run = launch("2:3", tmp_path, "--steps", 10, "--kill", "1:5:stop",
                 "--marker", tmp_path / "marker",
                 env={"KILN_ELASTIC_TIMEOUT": "2"}, wait=False)
    began = time.time()
    while not (tmp_path / "result.json").exists():
        assert run.poll() is None, run.stdout.read()
        assert time.time() - began < 120, "the others did not go on"
        time.sleep(0.2)
    os.kill(int((tmp_path / "marker.0").read_text()), signal.SIGCONT)
    out, _ = run.communicate(timeout=60)
    assert run.returncode == 0, out
    assert "Timed out waiting 2000ms" in out, out
    assert "the run finished before this worker joined it" in out, out
    check_result(tmp_path, 10, lambda s: s[0] == 3 and s[-1] == 2)


def test_a_killed_worker_on_redis(tmp_path, redis_store):
    _, store = redis_store
    r = launch("2:3", tmp_path, "--steps", 8, "--kill", "1:3:allreduce",
               "--marker", tmp_path / "marker", store=store)
    assert r.returncode == 0, r.stdout + r.stderr
    check_result(tmp_path, 8, lambda s: s[0] == 3 and s[-1] == 2)


def test_a_worker_started_again_rejoins(tmp_path):
    steps = 40
    r = launch("2:3", tmp_path, "--steps", steps, "--sleep", 0.1,
               "--commit-every", 2, "--kill", "1:4:between", "--marker",
               tmp_path / "marker", restarts=1)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert "starting it again (0 restart(s) left)" in log, log
    # The new worker comes back while the survivors form the next
    # generation, or later, when they see it waiting at a commit: 3 workers
    # at the end either way.
    assert "generation 1: rank 2 of 3" in log or (
        "workers wait to join" in log), log
    check_result(tmp_path, steps, lambda s: s[0] == 3 and s[-1] == 3)


def test_a_worker_joins_from_another_launcher(tmp_path):
    store = f"file:{tmp_path}/store"
    steps = 40
    progress = tmp_path / "progress"
    first = launch("2:3", tmp_path, "--steps", steps, "--sleep", 0.1,
                   "--progress", progress, local=2, store=store, wait=False)
    wait_for_step(first, progress, 2)
    second = launch("2:3", tmp_path, "--steps", steps, "--sleep", 0.1,
                    local=1, store=store, wait=False)
    out1, _ = first.communicate(timeout=240)
    out2, _ = second.communicate(timeout=240)
    assert first.returncode == 0, out1 + out2
    assert second.returncode == 0, out1 + out2
    assert "workers wait to join" in out1, out1
    sizes = check_result(tmp_path, steps, lambda s: s[0] == 2 and s[-1] == 3)
    assert sizes == sorted(sizes), sizes


@pytest.mark.parametrize("zero", [1, 3])
def test_zero_state_is_resharded_for_the_survivors(tmp_path, zero):
    """The momentum buffer (and at stage 3 the parameters) are held in
    blocks over 3 workers; after a kill they are put back together from
    the blocks the survivors kept and cut in 2. (Stage 2 holds the same
    state as stage 1; only the step's program differs.)"""
    steps = 10
    r = launch("2:3", tmp_path, "--steps", steps, "--zero", zero, "--kill",
               "1:5:allreduce", "--marker", tmp_path / "marker")
    assert r.returncode == 0, r.stdout + r.stderr
    check_result(tmp_path, steps, lambda s: s[0] == 3 and s[-1] == 2)


def test_zero3_state_is_resharded_for_a_joining_worker(tmp_path):
    store = f"file:{tmp_path}/store"
    steps = 40
    args = ("--steps", steps, "--sleep", 0.1, "--zero", 3)
    progress = tmp_path / "progress"
    first = launch("2:3", tmp_path, *args, "--progress", progress, local=2,
                   store=store, wait=False)
    wait_for_step(first, progress, 2)
    second = launch("2:3", tmp_path, *args, local=1, store=store, wait=False)
    out1, _ = first.communicate(timeout=240)
    out2, _ = second.communicate(timeout=240)
    assert first.returncode == 0 and second.returncode == 0, out1 + out2
    check_result(tmp_path, steps, lambda s: s[0] == 2 and s[-1] == 3)


def test_zero_blocks_lost_with_two_neighbours_are_a_clear_error(tmp_path):
    r = launch("2:4", tmp_path, "--steps", 10, "--zero", 1,
               "--kill", "1:3:between", "--kill", "2:3:between",
               "--marker", tmp_path / "marker", timeout=120)
    log = r.stdout + r.stderr
    assert r.returncode != 0, log
    assert "was lost with its workers" in log, log
    assert "two neighbours failed" in log, log


def cpp_worker():
    path = os.path.join(os.environ.get("KILN_BIN_DIR", ""), os.pardir, "test",
                        "unit", "jit", "kiln-elastic-worker")
    if not os.path.exists(path):
        pytest.skip("kiln-elastic-worker not built")
    return path


@pytest.mark.parametrize("kill", ["1:5"])
def test_the_cpp_api_survives_a_killed_worker(tmp_path, kill):
    """kiln/Elastic.h (test/unit/jit/ElasticWorker.cpp): the same training
    in C++, on the worker's data written here."""
    steps = 10
    x, y = elastic_worker.data(steps)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    args = [] if kill is None else kill.split(":") + [tmp_path / "marker"]
    r = launch("2:3", tmp_path, *args, command=[
        cpp_worker(), str(tmp_path / "x.npy"), str(tmp_path / "y.npy"),
        str(tmp_path), str(steps)])
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    if kill is None:
        check_result(tmp_path, steps, [3] * steps)
    else:
        assert "back to commit" in log, log
        check_result(tmp_path, steps, lambda s: s[0] == 3 and s[-1] == 2)


def test_a_failure_that_repeats_from_one_commit_ends_the_run(tmp_path):
    """Ranks that disagree on a collective fail the same way at every try:
    after KILN_ELASTIC_RETRIES tries from one commit the run ends."""
    r = launch("3:3", tmp_path, "--steps", 8, "--disagree", 3,
               env={"KILN_ELASTIC_RETRIES": "2"}, timeout=120)
    log = r.stdout + r.stderr
    assert r.returncode != 0, log
    assert "this rank passes 16 bytes but rank 1 passes 8" in log or (
        "this rank passes 8 bytes but rank 0 passes 16" in log), log
    assert "failed 3 times from commit 1 without a new commit " \
           "(KILN_ELASTIC_RETRIES=2); giving up" in log, log


def test_a_spare_that_gives_up_does_not_block_the_next_generation(tmp_path):
    """A worker arriving at a full run (2 of 2) waits at the next
    generation and gives up after the rendezvous timeout. A member that
    survives a later kill must not fail with it: it goes on, alone."""
    store = f"file:{tmp_path}/store"
    env = {"KILN_ELASTIC_RENDEZVOUS_TIMEOUT": "1.5"}
    progress = tmp_path / "progress"
    run = launch("1:2", tmp_path, "--steps", 40, "--sleep", 0.1, "--kill",
                 "1:30:between", "--marker", tmp_path / "marker",
                 "--progress", progress, local=2, store=store, env=env,
                 wait=False)
    wait_for_step(run, progress, 2)
    spare = launch("1:2", tmp_path, "--steps", 40, local=1, store=store,
                   env=env, timeout=60)
    assert spare.returncode != 0
    assert "could not be formed within 1 s" in spare.stdout + spare.stderr
    out, _ = run.communicate(timeout=240)
    assert run.returncode == 0, out
    check_result(tmp_path, 40, lambda s: s[0] == 2 and s[-1] == 1)


def test_fewer_workers_than_the_minimum_end_the_run(tmp_path):
    r = launch("3:3", tmp_path, "--steps", 8, "--kill", "1:2:between",
               "--marker", tmp_path / "marker",
               env={"KILN_ELASTIC_RENDEZVOUS_TIMEOUT": "2"}, timeout=60)
    log = r.stdout + r.stderr
    assert r.returncode != 0, log
    assert "could not be formed within 2 s" in log, log
    assert "fewer workers than the run's minimum of 3" in log, log


def test_a_store_nobody_serves_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = launch("1:2", tmp_path, "--steps", 2,
               store=f"redis://127.0.0.1:{port}", timeout=60)
    log = r.stdout + r.stderr
    assert r.returncode != 0, log
    assert f"cannot reach the store redis://127.0.0.1:{port}" in log, log
    assert "redis-server" in log, log


def test_the_store_going_away_ends_the_run(tmp_path, redis_store):
    server, store = redis_store
    run = launch("2:2", tmp_path, "--steps", 400, "--sleep", 0.02,
                 local=2, store=store, wait=False)
    time.sleep(3)
    server.kill()
    out, _ = run.communicate(timeout=60)
    assert run.returncode != 0, out
    assert "the store redis://127.0.0.1" in out, out
    assert not (tmp_path / "result.json").exists()


def test_launcher_options_are_checked():
    for args, message in [
            (["--nproc", "3:2"], "1 <= MIN <= MAX"),
            (["--nproc", "2", "--local", "1"], "--local is for an elastic"),
            (["--nproc", "2", "--max-restarts", "1"],
             "--max-restarts is for an elastic"),
            (["--nproc", "1:2", "--store", "file:/tmp/x"], "needs --run-id")]:
        r = subprocess.run([launcher()] + args + ["--", "true"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and message in r.stderr, (args, r.stderr)


def test_not_an_elastic_run_says_how_to_start_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, WORKER, str(tmp_path)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode != 0
    assert "kiln-launch --nproc MIN:MAX" in r.stderr, r.stderr
