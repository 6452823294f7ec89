"""kiln.distributed and data-parallel kiln.jit (comm, batch_argnums)."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

WORKERS = os.path.join(os.path.dirname(__file__), "workers")


def run_on_ranks(worker, ranks, *args):
    """Runs workers/<worker> under mpirun -n ranks; skips without mpirun."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        pytest.skip("mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(ranks),
           "-x", "PYTHONPATH", sys.executable, os.path.join(WORKERS, worker)]
    r = subprocess.run(cmd + [str(a) for a in args], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]


def run_on_gloo_ranks(worker, ranks, store, *args):
    """Runs workers/<worker> on ranks that meet through a store over Gloo
    (test/unit/runtime/gloo_test.sh); skips where the plug-in or, for a
    redis store, redis-server is missing."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    script = os.path.join(root, "test", "unit", "runtime", "gloo_test.sh")
    cmd = [script, store, str(ranks), sys.executable,
           os.path.join(WORKERS, worker)]
    env = dict(os.environ, KILN_TEST_COMM="gloo")
    r = subprocess.run(cmd + [str(a) for a in args], capture_output=True,
                       text=True, timeout=300, env=env)
    if r.returncode == 77:
        pytest.skip(r.stdout.strip())
    if "cannot load the Gloo plug-in" in r.stdout:
        pytest.skip("the Gloo plug-in is not built (apt-get install "
                    "libgloo-dev libhiredis-dev, then reconfigure)")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def mse_step(w, x, y):
    loss, g = kiln.value_and_grad(lambda w: knp.mean((x @ w - y) ** 2))(w)
    return loss, w - 0.1 * g


def test_a_single_rank_run_matches_plain_jit(rng):
    comm = kiln.distributed.single()
    assert (comm.rank, comm.size) == (0, 1)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    parallel = kiln.jit(mse_step, comm=comm, batch_argnums=(1, 2))
    loss, w1 = parallel(w, x, y)
    loss_ref, w1_ref = kiln.jit(mse_step)(w, x, y)
    np.testing.assert_allclose(loss, loss_ref, rtol=1e-6)
    np.testing.assert_allclose(w1, w1_ref, rtol=1e-6, atol=1e-7)
    # The cached fast path calls through the communicator too.
    loss2, _ = parallel(w, x, y)
    np.testing.assert_allclose(loss2, loss_ref, rtol=1e-6)


def test_all_gather_and_block(rng):
    comm = kiln.distributed.single()
    x = rng.standard_normal((6, 2))
    np.testing.assert_array_equal(comm.all_gather(x), x)
    np.testing.assert_array_equal(kiln.distributed.block(x, comm), x)
    with pytest.raises(TypeError, match="scalar"):
        kiln.distributed.block(np.float32(1), comm)
    comm.barrier()


def test_errors_name_the_fix(rng):
    with pytest.raises(TypeError, match="kiln.distributed.mpi"):
        kiln.jit(mse_step, batch_argnums=(1,))
    with pytest.raises(TypeError, match="communicator"):
        kiln.jit(mse_step, comm="mpi", batch_argnums=(1,))
    with pytest.raises(TypeError, match="both static and a batch"):
        kiln.jit(mse_step, static_argnums=(1,), comm=kiln.distributed.single(),
                 batch_argnums=(1,))
    f = kiln.jit(lambda a, s: a * s, comm=kiln.distributed.single(),
                 batch_argnums=(1,))
    with pytest.raises(TypeError, match="scalar"):
        f(np.ones(3, np.float32), np.float32(2))
    g = kiln.jit(mse_step, comm=kiln.distributed.single(), batch_argnums=(5,))
    with pytest.raises(TypeError, match="names argument 5"):
        g(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32),
          np.ones((2, 2), np.float32))


def check_matches_one_process(out, ranks):
    """data_parallel_worker.py's result at `out`, from `ranks` ranks: the
    parameters moved, and the run on ranks is the run on one process up to
    f32 sums in another order."""
    result = json.loads(out.read_text())
    assert result["ranks"] == ranks
    assert result["same_on_every_rank"]
    assert result["moved"] > 1e-3
    assert result["worst"] < 1e-5, result
    np.testing.assert_allclose(result["losses"], result["single_losses"],
                               rtol=1e-5)
    # Dropout under data parallelism draws the whole batch's mask, a
    # different block on each rank (not each rank the first block's mask).
    parallel, single, blockwise = result["dropout"]
    assert abs(parallel - single) <= 1e-4 * abs(single), result["dropout"]
    assert abs(parallel - blockwise) > 1e-2, result["dropout"]


@pytest.mark.parametrize("ranks", [2, 4])
def test_adam_on_mpi_ranks_matches_one_process(ranks, tmp_path):
    out = tmp_path / "result.json"
    run_on_ranks("data_parallel_worker.py", ranks, out, 20)
    check_matches_one_process(out, ranks)


@pytest.mark.parametrize("ranks,store", [(2, "file"), (3, "redis")])
def test_adam_on_gloo_ranks_matches_one_process(ranks, store, tmp_path):
    out = tmp_path / "result.json"
    run_on_gloo_ranks("data_parallel_worker.py", ranks, store, out, 20)
    check_matches_one_process(out, ranks)


def test_gloo_without_a_launcher_is_one_rank():
    saved = {k: os.environ.pop(k) for k in
             ("KILN_RANK", "KILN_WORLD_SIZE", "KILN_STORE") if k in os.environ}
    try:
        comm = kiln.distributed.gloo()
    finally:
        os.environ.update(saved)
    assert (comm.rank, comm.size) == (0, 1)


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_zero_on_mpi_ranks_matches_one_process(zero, tmp_path):
    out = tmp_path / "result.json"
    run_on_ranks("data_parallel_worker.py", 2, out, 20, zero)
    result = json.loads(out.read_text())
    assert result["blocks_out"], "the state did not come back as blocks"
    assert result["same_on_every_rank"]
    assert result["moved"] > 1e-3
    assert result["worst"] < 1e-5, result
    np.testing.assert_allclose(result["losses"], result["single_losses"],
                               rtol=1e-5)


def test_zero_on_one_rank_through_jit_and_compiled(rng):
    comm = kiln.distributed.single()
    opt = kiln.optim.adam(0.01)

    def step(params, state, x, y):
        loss, grads = kiln.value_and_grad(
            lambda p: knp.mean((x @ p["w"] - y) ** 2))(params)
        params, state = opt.update(params, grads, state)
        return loss, params, state

    params = {"w": rng.standard_normal((5, 3)).astype(np.float32)}
    x = rng.standard_normal((8, 5)).astype(np.float32)
    y = rng.standard_normal((8, 3)).astype(np.float32)
    _, want, want_state = kiln.jit(step)(params, opt.init(params), x, y)
    sharded = kiln.jit(step, comm=comm, batch_argnums=(2, 3), zero=1,
                       shard_outnums=(2,))
    state = kiln.distributed.shard(opt.init(params), comm)
    for run in (sharded, sharded.compile(params, state, x, y)):
        _, got, got_state = run(params, state, x, y)
        assert isinstance(got_state["exp_avg"]["w"], kiln.distributed.Sharded)
        np.testing.assert_allclose(got["w"], want["w"], rtol=1e-6)
        np.testing.assert_allclose(
            kiln.distributed.unshard(got_state, comm)["exp_avg"]["w"],
            want_state["exp_avg"]["w"], rtol=1e-6)


def test_zero_mistakes(rng):
    comm = kiln.distributed.single()
    with pytest.raises(ValueError, match="a ZeRO stage, 1, 2 or 3"):
        kiln.jit(mse_step, comm=comm, batch_argnums=(1,), zero=4)
    with pytest.raises(TypeError, match="name its batches in batch_argnums"):
        kiln.jit(mse_step, comm=comm, zero=1)
    blocks = kiln.distributed.shard({"w": np.ones((3, 2), np.float32),
                                     "count": np.int64(0)}, comm)
    assert isinstance(blocks["w"], kiln.distributed.Sharded)
    assert blocks["count"] == 0
    np.testing.assert_array_equal(
        kiln.distributed.unshard(blocks, comm)["w"], np.ones((3, 2)))
    with pytest.raises(TypeError, match="needs comm= and zero="):
        kiln.jit(lambda w: w * 2)(blocks["w"])


@pytest.mark.parametrize("ranks", [2, 4])
def test_collectives_on_mpi_ranks_match_numpy(ranks, tmp_path):
    out = tmp_path / "result.json"
    run_on_ranks("collectives_worker.py", ranks, out)
    result = json.loads(out.read_text())
    assert result["ranks"] == ranks
    assert result["failures"] == []


def test_collectives_on_one_rank(rng):
    comm = kiln.distributed.single()
    kd = kiln.distributed
    x = rng.standard_normal((4, 3))

    @kiln.jit
    def unrun(x):
        return kd.all_reduce(x, comm)

    f = kiln.jit(lambda x: (kd.all_reduce(x, comm, op="mean"),
                            kd.all_gather(x, comm, axis=1),
                            kd.reduce_scatter(x, comm), kd.broadcast(x, comm),
                            kd.all_to_all(x, comm, 0, 1),
                            kd.permute(x, comm, [(0, 0)]), kd.rank(comm)),
                 comm=comm)
    for got in f(x)[:-1]:
        np.testing.assert_array_equal(got, x)
    assert f(x)[-1] == 0
    # Without comm= the compiled code would have no communicator to call.
    with pytest.raises(kiln.JitError, match=r"pass the communicator: "
                       r"kiln.jit\(f, comm=kiln.distributed.mpi\(\)\)"):
        unrun(x)


def test_collective_mistakes(rng):
    comm = kiln.distributed.single()
    kd = kiln.distributed
    x = rng.standard_normal((4, 3))
    with pytest.raises(ValueError, match="'sum', 'max', 'min' or 'mean'"):
        kiln.jit(lambda x: kd.all_reduce(x, comm, op="prod"), comm=comm)(x)
    with pytest.raises(ValueError, match="hold 2 ranks, the communicator 1"):
        kiln.jit(lambda x: kd.all_reduce(x, comm, groups=[[0, 1]]),
                 comm=comm)(x)
    with pytest.raises(TypeError, match="expected a communicator"):
        kiln.jit(lambda x: kd.all_gather(x, 2))(x)
    with pytest.raises(kiln.TraceError, match="axis 5 is out of range"):
        kiln.jit(lambda x: kd.all_gather(x, comm, axis=5), comm=comm)(x)


@pytest.mark.parametrize("ranks", [2, 4])
def test_loss_scaling_on_mpi_ranks_matches_one_process(ranks, tmp_path):
    # f16 autocast from an overflowing scale: every rank must skip the same
    # steps and back off alike (the finiteness check reads the all-reduced
    # gradients), exactly as one process on the whole batch does.
    out = tmp_path / "result.json"
    run_on_ranks("loss_scaling_worker.py", ranks, out, 120)
    result = json.loads(out.read_text())
    assert result["ranks"] == ranks
    assert result["same_on_every_rank"]
    parallel, single = result["parallel"], result["single"]
    assert parallel["skipped"] == single["skipped"]
    assert parallel["scales"] == single["scales"]
    # 2^40 overflows: the first steps are skipped, then the scale fits,
    # grows again after 5 clean steps, and the model trains.
    assert 5 <= sum(parallel["skipped"]) < 40
    assert parallel["skipped"][0] and not parallel["skipped"][-1]
    assert max(parallel["scales"][-10:]) > min(parallel["scales"])
    # A step where only the last rank's gradient overflows is skipped by
    # every rank (same_on_every_rank), as by the single process.
    spike = parallel["spike"]
    assert parallel["skipped"][spike] and not parallel["skipped"][spike - 1]
    assert result["final_relative_loss"] < 1e-2
    assert result["worst"] < 1e-4, result
    np.testing.assert_allclose(parallel["losses"], single["losses"],
                               rtol=1e-4)
