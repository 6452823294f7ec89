"""Wide & Deep (Cheng et al., 2016) on Criteo-format click logs with kiln,
written with kiln.feature_column as TensorFlow's canned
DNNLinearCombinedClassifier is with tf.feature_column.

The columns, from the raw features of each tf.Example:
- wide: every categorical field hashed into buckets (TensorFlow's
  FarmHash buckets, categorical_column_with_hash_bucket) and crosses of
  field pairs (crossed_column), a linear model (feature_column.linear_model);
- deep: the 13 counts (log(1 + x), numeric_column with a normalizer) and an
  embedding of every hashed field (embedding_column, combiner mean), into
  an MLP (feature_column.dense_features).
The click logit is the sum of the two; binary cross-entropy; Adagrad on
every parameter (the tables' and the wide weights' updates touch only the
rows a batch read). Strings are hashed in the pipeline (feature_column.
prepare, in numpy); everything after is one kiln.jit step.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/wide_deep/wide_deep.py \\
        /tmp/wd-train.tfrecord.gz /tmp/wd-test.tfrecord.gz --write-synthetic 60000

--write-synthetic ROWS first writes the two files (examples/python/dlrm/
criteo_synthetic.py, the test file a sixth as many rows, one planted
model). Prints the loss every 100 steps and the held-out AUC against the
file's Bayes AUC; exits 1 below --min-auc-of-bayes times it.
"""

import argparse
import os
import sys
import time

import numpy as np

import kiln
import kiln.numpy as knp
from kiln import feature_column as fc
from kiln_runtime import data

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "dlrm"))
import criteo_synthetic  # noqa: E402

DENSE, SPARSE = criteo_synthetic.DENSE, criteo_synthetic.SPARSE
# Field pairs crossed for the wide part.
CROSSES = ((0, 2), (5, 8), (11, 15), (19, 23), (0, 5))


def columns(buckets, dim):
    """(wide columns, deep columns)."""
    fields = [fc.categorical_column_with_hash_bucket(f"C{k + 1}", buckets)
              for k in range(SPARSE)]
    crosses = [fc.crossed_column([f"C{a + 1}", f"C{b + 1}"], buckets * 4)
               for a, b in CROSSES]
    counts = [fc.numeric_column(
        f"I{j + 1}", normalizer_fn=lambda x: knp.log1p(knp.maximum(x, 0.0)))
        for j in range(DENSE)]
    deep = counts + [fc.embedding_column(c, dim, combiner="mean")
                     for c in fields]
    return fields + crosses, deep


def raw_batches(path, batch_size, drop_remainder):
    """Raw features of each batch: counts as float32 [n, 1] (missing: -1),
    categorical values as bytes [n, 1] (missing: empty), labels."""
    spec = {"label": data.FixedLenFeature((), "int64")}
    for j in range(DENSE):
        spec[f"I{j + 1}"] = data.FixedLenFeature((), "int64", default=-1)
    for k in range(SPARSE):
        spec[f"C{k + 1}"] = data.FixedLenFeature((), "bytes", default=b"")
    for parsed in data.Dataset(path, batch_size, spec=spec,
                               drop_remainder=drop_remainder):
        raw = {name: value.reshape(-1, 1).astype(np.float32)
               if name.startswith("I") else value.reshape(-1, 1)
               for name, value in parsed.items() if name != "label"}
        yield raw, parsed["label"].astype(np.float32)


def init_params(wide, deep, seed, hidden=(64, 32)):
    rng = np.random.default_rng(seed)
    width = DENSE + sum(c.width for c in deep[DENSE:])
    sizes = (width,) + tuple(hidden) + (1,)
    return {
        "wide": fc.init_linear_params(wide),
        "tables": fc.init_params(deep, kiln.random.PRNGKey(seed)),
        "mlp": [{"w": rng.normal(0, np.sqrt(2 / (a + b)), (a, b)).astype(np.float32),
                 "b": np.zeros(b, np.float32)}
                for a, b in zip(sizes, sizes[1:])],
    }


def make_logits(wide, deep):
    def logits(params, inputs):
        x = fc.dense_features(deep, inputs, params["tables"])
        for i, layer in enumerate(params["mlp"]):
            x = x @ layer["w"] + layer["b"]
            if i + 1 < len(params["mlp"]):
                x = kiln.nn.relu(x)
        linear = fc.linear_model(wide, inputs, params["wide"])
        return knp.reshape(x + linear, (x.shape[0],))
    return logits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train")
    parser.add_argument("test")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--buckets", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-auc-of-bayes", type=float, default=0.0)
    parser.add_argument("--write-synthetic", type=int, metavar="ROWS")
    args = parser.parse_args(argv)
    if args.write_synthetic:
        criteo_synthetic.write_train_and_test(
            args.train, args.test, args.write_synthetic,
            lambda path: "tfrecord")

    wide, deep = columns(args.buckets, args.dim)
    every = wide + deep
    logits = make_logits(wide, deep)
    optimizer = kiln.optim.adagrad(lr=args.lr)

    @kiln.jit
    def step(params, state, inputs, labels):
        def loss(params):
            z = logits(params, inputs)
            return knp.mean(knp.maximum(z, 0.0) - z * labels
                            + knp.log1p(knp.exp(-knp.abs(z))))
        value, grads = kiln.value_and_grad(loss)(params)
        params, state = optimizer.update(params, grads, state)
        return value, params, state

    params = init_params(wide, deep, args.seed)
    state = optimizer.init(params)
    steps, started = 0, time.perf_counter()
    for _ in range(args.epochs):
        # One signature: a short last batch is dropped.
        for raw, labels in raw_batches(args.train, args.batch, True):
            value, params, state = step(params, state, fc.prepare(every, raw),
                                        labels)
            steps += 1
            if steps % 100 == 0:
                print(f"step {steps}: loss {float(value):.4f}", flush=True)
    seconds = time.perf_counter() - started
    print(f"{steps} steps, {steps * args.batch / seconds:.0f} samples/s "
          f"(compile included)")

    predict = kiln.jit(logits)
    scores, truth = [], []
    for raw, labels in raw_batches(args.test, args.batch, False):
        scores.append(np.asarray(predict(params, fc.prepare(every, raw))))
        truth.append(labels)
    return criteo_synthetic.report_auc(args.test, np.concatenate(truth),
                                       np.concatenate(scores),
                                       args.min_auc_of_bayes)


if __name__ == "__main__":
    sys.exit(main())
