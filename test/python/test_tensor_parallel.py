"""Tensor-parallel kiln.jit (mesh, in_shardings, out_shardings) and
kiln.distributed.P / mesh_block."""

import json
import os

import numpy as np
import pytest

import kiln
import kiln.distributed as kd
import kiln.numpy as knp
from kiln.distributed import P

from test_distributed import run_on_ranks


@pytest.mark.parametrize("ranks,mesh", [(2, "tp"), (4, "tp"), (4, "dp_tp")])
def test_megatron_block_with_adam_matches_one_process(ranks, mesh, tmp_path):
    out = tmp_path / "result.json"
    run_on_ranks("tensor_parallel_worker.py", ranks, out, 20, mesh)
    result = json.loads(out.read_text())
    assert result["ranks"] == ranks
    tp = ranks if mesh == "tp" else ranks // 2
    # Each rank holds its blocks of the split weights.
    assert result["shapes"]["w1"] == [12, 16 // tp]
    assert result["shapes"]["w2"] == [16 // tp, 12]
    assert result["shapes"]["w0"] == [12, 12]
    assert result["moved"] > 1e-3
    assert result["worst"] < 1e-5, result
    np.testing.assert_allclose(result["losses"], result["single_losses"],
                               rtol=1e-5)


def test_mesh_block_cuts_row_major_blocks():
    x = np.arange(4 * 6).reshape(4, 6)
    mesh = {"dp": 2, "tp": 3}
    # Rank 4 is (dp, tp) = (1, 1).
    np.testing.assert_array_equal(kd.mesh_block(x, P("dp", "tp"), mesh, 4),
                                  x[2:4, 2:4])
    np.testing.assert_array_equal(kd.mesh_block(x, P(None, "tp"), mesh, 5),
                                  x[:, 4:6])
    np.testing.assert_array_equal(kd.mesh_block(x, None, mesh, 3), x)
    with pytest.raises(ValueError, match="rank 2"):
        kd.mesh_block(x, P("dp"), mesh, 0)
    with pytest.raises(ValueError, match="does not split"):
        kd.mesh_block(x, P("tp", None), mesh, 0)
    with pytest.raises(ValueError, match="an axis splits one dimension"):
        P("tp", "tp")
    with pytest.raises(TypeError, match="mesh axis names"):
        P(0, None)


def test_one_rank_mesh_matches_plain_jit(rng):
    comm = kd.single()
    w = rng.standard_normal((6, 4)).astype(np.float32)
    x = rng.standard_normal((3, 6)).astype(np.float32)

    def f(w, x):
        return knp.sum(knp.tanh(x @ w)), w * 2.0

    split = kiln.jit(f, comm=comm, mesh={"tp": 1},
                     in_shardings=(P(None, "tp"), None),
                     out_shardings=(None, P(None, "tp")))
    for got, want in zip(split(w, x), kiln.jit(f)(w, x)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_mesh_mistakes_name_the_fix(rng):
    comm = kd.single()
    f = lambda w, x: x @ w
    with pytest.raises(TypeError, match="pass comm="):
        kiln.jit(f, mesh={"tp": 1})
    with pytest.raises(TypeError, match="pass mesh="):
        kiln.jit(f, comm=comm, in_shardings=(P(None, "tp"),))
    with pytest.raises(ValueError, match="has 2 ranks but the communicator 1"):
        kiln.jit(f, comm=comm, mesh={"tp": 2})
    with pytest.raises(TypeError, match="dict of axis sizes"):
        kiln.jit(f, comm=comm, mesh=[("tp", 1)])
    with pytest.raises(TypeError, match="batch_argnums"):
        kiln.jit(f, comm=comm, mesh={"tp": 1}, batch_argnums=(1,))
    w = np.ones((4, 2), np.float32)
    x = np.ones((3, 4), np.float32)
    wrong_rank = kiln.jit(f, comm=comm, mesh={"tp": 1},
                          in_shardings=(P("tp"), None))
    with pytest.raises(ValueError, match="has rank 2"):
        wrong_rank(w, x)
    unknown = kiln.jit(f, comm=comm, mesh={"tp": 1},
                       in_shardings=(P(None, "model"), None))
    with pytest.raises(ValueError, match="'model'"):
        unknown(w, x)
    mismatched = kiln.jit(f, comm=comm, mesh={"tp": 1},
                          in_shardings=([P(None, "tp")], None))
    with pytest.raises(TypeError, match="does not match the structure"):
        mismatched(w, x)


def test_spmd_text_shows_the_program_of_one_rank(rng):
    comm = kd.single()
    w = np.ones((4, 6), np.float32)
    x = np.ones((3, 4), np.float32)

    def f(w, x):
        return knp.sum(x @ w, axis=1)

    split = kiln.jit(f, comm=comm, mesh={"tp": 1},
                     in_shardings=(P(None, "tp"), None))
    text = split.lower(w, x).spmd_text()
    assert "kiln.matmul" in text and "kiln.all_reduce" in text, text
    assert "kiln.mesh" not in text and "kiln.sharding" not in text
    ddp = kiln.jit(f, comm=comm, batch_argnums=(1,))
    assert "kiln.all_gather" in ddp.lower(w, x).spmd_text()
    with pytest.raises(TypeError, match="jitted with comm="):
        kiln.jit(f).lower(w, x).spmd_text()
