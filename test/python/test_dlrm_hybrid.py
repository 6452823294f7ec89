"""The DLRM example's hybrid-parallel step (examples/python/dlrm/dlrm.py,
make_step with a communicator) on 2 and 4 MPI ranks against one process:
the tables split by rows over the ranks, the batch by examples, twenty
steps from the same parameters on the same batches, losses and joined
parameters within 1e-5.

SGD is checked in float32. Adagrad is checked in float64: on its first
steps a table entry's update is lr * g / sqrt(g * g), near lr * sign(g)
whatever g's size, so for a gradient that is within float32 rounding of
zero (a sum that cancels) the order in which the ranks add decides its
sign, and two correct float32 runs part by up to 2 lr on such entries."""

import json

import pytest

from test_distributed import run_on_ranks

STEPS = 20


# On 4 ranks the ids and rows go to their owners by all_to_all in buckets
# (and the whole group gathers them when a bucket overflows), forward and
# backward; SGD's and Adagrad's table gradients take that path alike, so 4
# ranks run once (each 4-rank compile takes most of a minute on 2 CPUs).
@pytest.mark.parametrize("ranks,optimizer,dtype", [
    (2, "sgd", "float32"), (2, "adagrad", "float64"),
    (4, "adagrad", "float64")])
def test_hybrid_dlrm_matches_one_process(ranks, optimizer, dtype, tmp_path):
    out = tmp_path / "result.json"
    run_on_ranks("dlrm_hybrid_worker.py", ranks, out, STEPS, optimizer, dtype)
    result = json.loads(out.read_text())
    assert result["ranks"] == ranks
    # Each rank holds its rows of every table.
    assert result["shape"] == [64 // ranks, 8]
    assert result["moved"] > 1e-4
    assert result["worst"] < 1e-5, result
    for got, want in zip(result["losses"], result["single_losses"]):
        assert got == pytest.approx(want, rel=1e-5)
