"""DLRM (Naumov et al., 2019) trained on Criteo-format click logs with kiln.

The model: a bottom MLP on the 13 counts (log(1 + x)), one embedding table
per categorical field (each hashed value modulo the table's size), the dot
products of every pair among the bottom MLP's output and the 26 embeddings
(DLRM's "dot" interaction), and a top MLP on those products and the bottom
output, ending in one click logit; binary cross-entropy. The whole training
step (forward, backward, the optimizer on every parameter) is one function
compiled by kiln.jit; the embedding tables' updates touch only the rows a
batch looked up (kiln-sparse-updates, for SGD and Adagrad alike).

The data comes through kiln_runtime.data: Criteo TSV logs by read_criteo,
or TFRecord files of tf.Example by Dataset with a parse spec. Write
synthetic logs with a planted signal first (criteo_synthetic.py):

    PYTHONPATH=build/python /usr/bin/python3 examples/python/dlrm/criteo_synthetic.py \\
        /tmp/train.txt --rows 200000 --seed 1
    PYTHONPATH=build/python /usr/bin/python3 examples/python/dlrm/criteo_synthetic.py \\
        /tmp/test.txt --rows 20000 --seed 2
    PYTHONPATH=build/python /usr/bin/python3 examples/python/dlrm/dlrm.py \\
        /tmp/train.txt /tmp/test.txt [--epochs 1] [--batch 256] \\
        [--optimizer sgd|adagrad] [--min-auc-of-bayes 0.9]

or, writing the two files first, `--write-synthetic 60000` (the test file
gets a sixth as many rows).

On N ranks the tables are split by rows over the ranks and the batch by
examples (HugeCTR's hybrid parallelism; make_step), each rank reading its
share of the training file (example i to rank i % N):

    mpirun -n 2 -x PYTHONPATH=build/python /usr/bin/python3 \
        examples/python/dlrm/dlrm.py /tmp/train.txt /tmp/test.txt

(as root, with --allow-run-as-root --oversubscribe). --batch is the
global batch; rank 0 prints and evaluates the joined tables.

Prints the loss every 100 steps, the samples per second, and the held-out
AUC against the file's Bayes AUC (from criteo_synthetic's .json); exits 1
when the AUC is below --min-auc-of-bayes times it.
"""

import argparse
import os
import sys
import time

import numpy as np

import kiln
import kiln.distributed as kd
import kiln.numpy as knp
from kiln.distributed import P
from kiln_runtime import data

DENSE, SPARSE = 13, 26


def init_params(seed, table_size, dim=16, bottom=(64, 32), top=(64,)):
    """DLRM's initialization in numpy: MLP weights normal with std
    sqrt(2 / (fan_in + fan_out)), biases normal with std sqrt(1 / fan_out),
    tables uniform in +-sqrt(1 / rows)."""
    rng = np.random.default_rng(seed)

    def mlp(sizes):
        layers = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            layers.append({
                "w": rng.normal(0, np.sqrt(2 / (fan_in + fan_out)),
                                (fan_in, fan_out)).astype(np.float32),
                "b": rng.normal(0, np.sqrt(1 / fan_out), fan_out).astype(np.float32)})
        return layers

    pairs = (SPARSE + 1) * SPARSE // 2
    bound = np.sqrt(1 / table_size)
    return {
        "bottom": mlp((DENSE,) + tuple(bottom) + (dim,)),
        "tables": [rng.uniform(-bound, bound, (table_size, dim)).astype(np.float32)
                   for _ in range(SPARSE)],
        "top": mlp((dim + pairs,) + tuple(top) + (1,)),
    }


def features(batch, table_size):
    """The model's inputs from a read_criteo batch: log(1 + count) as
    float32 [n, 13], and ids [n, 26] (a missing value id 0, the others
    their hash modulo table_size - 1, plus 1)."""
    dense = np.log1p(np.maximum(batch["dense"], 0)).astype(np.float32)
    sparse = batch["sparse"]
    ids = np.where(sparse < 0, 0, sparse % (table_size - 1) + 1).astype(np.int64)
    return dense, ids, batch["label"].astype(np.float32)


def _mlp(layers, x, last_relu):
    for i, layer in enumerate(layers):
        x = x @ layer["w"] + layer["b"]
        if i + 1 < len(layers) or last_relu:
            x = kiln.nn.relu(x)
    return x


_ROWS, _COLS = np.tril_indices(SPARSE + 1, -1)


def logits(params, dense, ids):
    """The click logits [n]."""
    x = _mlp(params["bottom"], dense, last_relu=True)
    vectors = [x] + [knp.take(table, ids[:, k], axis=0)
                     for k, table in enumerate(params["tables"])]
    z = knp.stack(vectors, axis=1)                       # [n, 27, dim]
    dots = knp.matmul(z, knp.swapaxes(z, 1, 2))          # [n, 27, 27]
    n = dots.shape[0]
    pairs = knp.take(knp.reshape(dots, (n, (SPARSE + 1) ** 2)),
                     _ROWS * (SPARSE + 1) + _COLS, axis=1)
    out = _mlp(params["top"], knp.concatenate([x, pairs], axis=1),
               last_relu=False)
    return knp.reshape(out, (n,))


def loss(params, dense, ids, labels):
    """Mean binary cross-entropy of the logits (the stable form)."""
    z = logits(params, dense, ids)
    return knp.mean(knp.maximum(z, 0.0) - z * labels
                    + knp.log1p(knp.exp(-knp.abs(z))))


def make_step(optimizer, comm=None, params=None, donate=True):
    """The training step (loss, params, state) = step(params, state, dense,
    ids, labels), compiled whole by kiln.jit. With a communicator of more
    than one rank it is split as HugeCTR splits DLRM: every table's rows
    over the ranks (model parallel: rank r holds rows [r T / N, (r + 1) T /
    N) of each table and of its optimizer state), the MLPs whole on every
    rank and the batch split by rows (data parallel). Each rank passes its
    blocks (split_params) and its rows of the batch; kiln-partition
    exchanges the ids and the looked-up rows with the tables' owners
    (all_gather on 2 ranks, all_to_all in per-owner buckets beyond) and
    all-reduces the MLPs' gradients.

    With donate (the default) the step takes params and state as donated
    buffers (kiln.jit's donate_argnums): the new values are written where
    the old ones were, so the tables are updated in place instead of copied
    into new arrays every step, and the arrays passed in hold the new values
    afterwards."""
    def step(params, state, dense, ids, labels):
        value, grads = kiln.value_and_grad(loss)(params, dense, ids, labels)
        params, state = optimizer.update(params, grads, state)
        return value, params, state
    donated = (0, 1) if donate else ()
    if comm is None or comm.size == 1:
        return kiln.jit(step, donate_argnums=donated)
    pspec, sspec = specs(params, optimizer.init(params))
    return kiln.jit(step, comm=comm, mesh={"dp": comm.size},
                    donate_argnums=donated,
                    in_shardings=(pspec, sspec, P("dp", None), P("dp", None),
                                  P("dp")),
                    out_shardings=(None, pspec, sspec))


def specs(params, state):
    """How the hybrid step splits the parameters and the optimizer state:
    the tables by rows over the mesh axis "dp", everything else whole; a
    state slot shaped like the parameters (Adagrad's sums) like them."""
    pspec = {"bottom": None, "top": None,
             "tables": [P("dp", None)] * len(params["tables"])}
    sspec = {k: pspec if isinstance(v, dict) and v.keys() == params.keys()
             else None for k, v in state.items()}
    return pspec, sspec


def split_params(params, state, comm):
    """This rank's blocks of the parameters and the optimizer state for the
    hybrid step, as arrays of their own (mesh_block's whole arrays and row
    blocks are the arguments' memory, which a donating step would write)."""
    pspec, sspec = specs(params, state)
    mesh = {"dp": comm.size}
    return kiln.tree_map(np.array, (
        kd.mesh_block(params, pspec, mesh, comm.rank),
        kd.mesh_block(state, sspec, mesh, comm.rank)))


def join_params(params, comm):
    """The whole parameters from every rank's blocks (each rank calls it)."""
    return dict(params, tables=[comm.all_gather(np.ascontiguousarray(t))
                                for t in params["tables"]])


def batches(path, batch_size, table_size, rank=0, ranks=1):
    """(dense, ids, labels) batches of a TSV log or a TFRecord file; with
    ranks > 1, of this rank's examples (example i to rank i % ranks)."""
    if ".tfrecord" in os.path.basename(path):
        spec = {"label": data.FixedLenFeature((), "int64")}
        for j in range(DENSE):
            spec[f"I{j + 1}"] = data.FixedLenFeature((), "int64", default=-1)
        for k in range(SPARSE):
            spec[f"C{k + 1}"] = data.FixedLenFeature((), "bytes", default=b"")
        for parsed in data.Dataset(path, batch_size, spec=spec, rank=rank,
                                   ranks=ranks):
            dense = np.stack([parsed[f"I{j + 1}"] for j in range(DENSE)], 1)
            sparse = np.stack([[int(v, 16) if v else -1
                                for v in parsed[f"C{k + 1}"]]
                               for k in range(SPARSE)], 1).astype(np.int64)
            yield features({"dense": dense, "sparse": sparse,
                            "label": parsed["label"]}, table_size)
    else:
        for batch in data.read_criteo(path, batch_size, rank, ranks):
            yield features(batch, table_size)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train")
    parser.add_argument("test")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--table-size", type=int, default=4096)
    parser.add_argument("--optimizer", choices=["sgd", "adagrad"], default="sgd")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-auc-of-bayes", type=float, default=0.0)
    parser.add_argument("--write-synthetic", type=int, metavar="ROWS",
                        help="first write synthetic logs at the two paths: "
                             "ROWS training examples (seed 1), ROWS / 6 test "
                             "ones (seed 2), of one planted model")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import criteo_synthetic
    comm = kd.mpi()
    ranks, main_rank = comm.size, comm.rank == 0
    if args.write_synthetic and main_rank:
        criteo_synthetic.write_train_and_test(
            args.train, args.test, args.write_synthetic,
            lambda path: ("tfrecord" if ".tfrecord" in os.path.basename(path)
                          else "tsv"))
    comm.barrier()  # the files are written before any rank reads them

    lr = args.lr or (0.2 if args.optimizer == "sgd" else 0.03)
    optimizer = (kiln.optim.sgd(lr=lr) if args.optimizer == "sgd"
                 else kiln.optim.adagrad(lr=lr))
    if args.batch % ranks or args.table_size % ranks:
        parser.error(f"--batch {args.batch} and --table-size "
                     f"{args.table_size} must split evenly over {ranks} ranks")
    params = init_params(args.seed, args.table_size)
    state = optimizer.init(params)
    step = make_step(optimizer, comm, params)
    if ranks > 1:
        params, state = split_params(params, state, comm)
    local = args.batch // ranks
    steps, samples, started = 0, 0, time.perf_counter()
    for _ in range(args.epochs):
        feed = batches(args.train, local, args.table_size, comm.rank, ranks)
        while True:
            batch = next(feed, None)
            # One signature: a short last batch is dropped, and every rank
            # stops at the first step some rank has no full batch for.
            full = batch is not None and len(batch[2]) == local
            if ranks > 1:
                full = bool(comm.all_gather(np.array([full], np.int32)).all())
            if not full:
                break
            value, params, state = step(params, state, *batch)
            steps += 1
            samples += args.batch
            if steps % 100 == 0 and main_rank:
                print(f"step {steps}: loss {float(value):.4f}", flush=True)
    seconds = time.perf_counter() - started
    if ranks > 1:
        params = join_params(params, comm)
        if not main_rank:
            return 0
    print(f"{steps} steps on {ranks} rank{'s' if ranks > 1 else ''}, "
          f"{samples / seconds:.0f} samples/s (compile included)")

    predict = kiln.jit(logits)
    scores, truth = [], []
    for dense, ids, labels in batches(args.test, args.batch, args.table_size):
        scores.append(np.asarray(predict(params, dense, ids)))
        truth.append(labels)
    return criteo_synthetic.report_auc(args.test, np.concatenate(truth),
                                       np.concatenate(scores),
                                       args.min_auc_of_bayes)


if __name__ == "__main__":
    sys.exit(main())
