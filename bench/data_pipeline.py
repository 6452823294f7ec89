#!/usr/bin/env python3
"""The input pipeline's throughput: kiln_runtime.data against tf.data on the
same files, spec and batch size.

The file holds synthetic Criteo examples as tf.Examples
(examples/python/dlrm/criteo_synthetic.py): a label, 13 int64 counts and 26
categorical hex strings, some absent. Both systems read the file, parse
every batch by the same spec (fixed-length features with defaults) and
hand numpy arrays to the caller:

  kiln     data.Dataset(path, batch, spec=spec, prefetch=2)
  tf.data  TFRecordDataset(path).batch(batch).map(parse_example,
           num_parallel_calls=threads).prefetch(2).as_numpy_iterator(),
           its thread pool set to `threads`

Each configuration runs in a subprocess pinned to `threads` CPUs (1 and 2);
the value is the median records per second over --rounds passes over the
file, the two systems alternating. Both must give the same arrays (checked
on the first batch).

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/data_pipeline.py \\
      [--records 100000] [--batch 256] [--rounds 5] \\
      [--markdown bench/results-data-pipeline.md]
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "python", "dlrm"))
import machine  # noqa: E402

DENSE, SPARSE = 13, 26


def kiln_spec(data):
    spec = {"label": data.FixedLenFeature((), "int64")}
    for j in range(DENSE):
        spec[f"I{j + 1}"] = data.FixedLenFeature((), "int64", default=-1)
    for k in range(SPARSE):
        spec[f"C{k + 1}"] = data.FixedLenFeature((), "bytes", default=b"")
    return spec


def tf_spec(tf):
    spec = {"label": tf.io.FixedLenFeature((), tf.int64)}
    for j in range(DENSE):
        spec[f"I{j + 1}"] = tf.io.FixedLenFeature((), tf.int64, default_value=-1)
    for k in range(SPARSE):
        spec[f"C{k + 1}"] = tf.io.FixedLenFeature((), tf.string, default_value=b"")
    return spec


def worker(path, batch, threads, rounds):
    """Runs in a subprocess pinned to `threads` CPUs; prints JSON
    {"kiln": [records/s...], "tf.data": [...]}."""
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus[:threads])
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    from kiln_runtime import data
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    spec, spec_tf = kiln_spec(data), tf_spec(tf)
    compression = "GZIP" if path.endswith(".gz") else ""

    def kiln_batches():
        return iter(data.Dataset(path, batch, spec=spec, prefetch=2))

    def tf_batches():
        ds = tf.data.TFRecordDataset(path, compression_type=compression)
        ds = ds.batch(batch).map(lambda r: tf.io.parse_example(r, spec_tf),
                                 num_parallel_calls=threads).prefetch(2)
        options = tf.data.Options()
        options.threading.private_threadpool_size = threads
        return ds.with_options(options).as_numpy_iterator()

    ours, theirs = next(kiln_batches()), next(tf_batches())
    for name in spec:
        a, b = np.asarray(ours[name]), np.asarray(theirs[name])
        if a.shape != b.shape or list(a.ravel()) != list(b.ravel()):
            raise SystemExit(f"data_pipeline: feature {name} differs")

    rates = {"kiln": [], "tf.data": []}
    for _ in range(rounds):
        for name, make in (("kiln", kiln_batches), ("tf.data", tf_batches)):
            start = time.perf_counter()
            records = sum(len(b["label"]) for b in make())
            rates[name].append(records / (time.perf_counter() - start))
    print(json.dumps(rates))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--markdown", default=None)
    parser.add_argument("--worker", nargs=2, metavar=("PATH", "THREADS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker[0], args.batch, int(args.worker[1]),
                      args.rounds)

    started = datetime.datetime.now(datetime.timezone.utc)
    import criteo_synthetic
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("criteo.tfrecord", "criteo.tfrecord.gz"):
            path = os.path.join(tmp, name)
            criteo_synthetic.write(path, args.records, 1, "tfrecord")
            size = os.path.getsize(path)
            for threads in (int(t) for t in args.threads.split(",")):
                rates = machine.run_worker(
                    __file__, ["--worker", path, threads, "--batch", args.batch,
                               "--rounds", args.rounds])
                if rates is None:
                    return 1
                median = machine.medians(rates)
                rows.append((name, size, threads, median["kiln"],
                             median["tf.data"]))
                print(rows[-1], flush=True)
    lines = ["# The input pipeline against tf.data", ""]
    lines += machine.measured_lines(started, __file__, sys.executable)
    lines += ["", f"{args.records} synthetic Criteo tf.Examples (label, 13 "
              f"int64 counts, 26 strings; fixed-length spec with defaults), "
              f"batches of {args.batch}, median of {args.rounds} passes; "
              "records per second, higher is better.", ""]
    lines += machine.table_head(["file", "threads", "kiln rec/s",
                                 "tf.data rec/s", "kiln / tf.data"])
    for name, size, threads, ours, theirs in rows:
        lines.append(f"| {name} ({size / 1e6:.1f} MB) | {threads} | "
                     f"{ours:,.0f} | {theirs:,.0f} | {ours / theirs:.2f} |")
    machine.write_report(lines, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
