"""Criteo-format click logs with a planted signal, for training DLRM
without the real (terabyte-sized, licence-bound) data.

Each example has the real logs' form: a 0/1 label, 13 integer counts
(some missing) and 26 categorical values, 32-bit hashes written as 8 hex
digits (some missing). The values are drawn so that a model can learn:

- count j ~ a geometric draw with a mean of its own; it is missing with
  probability 0.1;
- categorical field k draws one of its `cardinality[k]` values (a Zipf-like
  popularity, as real ids have), each value a fixed random 32-bit hash; it
  is missing with probability 0.05;
- the label is a Bernoulli draw with probability sigmoid(logit), where the
  logit adds a bias, a weight per count times log(1 + count), and for 8 of
  the 26 fields a weight per value (the others carry no signal).

The true probabilities are kept, so the best area under the ROC curve any
model can reach on the file (its "Bayes AUC") is known: `write` returns it
and the command writes it beside the data as <path>.json. A trained model
should come close to it.

    /usr/bin/python3 examples/python/dlrm/criteo_synthetic.py train.txt \
        --rows 200000 --seed 1 [--format tsv|tfrecord]

TSV files are what kiln_runtime.data.read_criteo reads. TFRecord files
hold one tf.Example per line of the log: "label" (int64), "I1".."I13"
(int64, absent where missing), "C1".."C26" (the hex string as bytes,
absent where missing); gzip-compressed when the name ends in .gz.
"""

import argparse
import json
import sys

import numpy as np

DENSE, SPARSE = 13, 26
SIGNAL_FIELDS = (0, 2, 5, 8, 11, 15, 19, 23)


def cardinalities(seed=0):
    """Each field's number of distinct values: a few large, most small."""
    rng = np.random.default_rng(seed + 1000)
    return [int(c) for c in rng.choice([3, 10, 40, 200, 1000, 5000], SPARSE,
                                       p=[0.1, 0.2, 0.25, 0.25, 0.15, 0.05])]


class Planted:
    """The generating model of one seed: value hashes, popularities and the
    weights of the label's logit."""

    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.cardinality = cardinalities(seed)
        self.count_means = rng.uniform(0.5, 40.0, DENSE)
        self.count_weights = rng.normal(0.0, 0.35, DENSE)
        self.bias = -1.2
        self.hashes = [rng.choice(2**32, c, replace=False) for c in self.cardinality]
        self.popularity = []
        self.value_weights = []
        for k, c in enumerate(self.cardinality):
            p = 1.0 / np.arange(1, c + 1) ** 1.05
            self.popularity.append(p / p.sum())
            self.value_weights.append(rng.normal(0.0, 1.0, c)
                                      if k in SIGNAL_FIELDS else np.zeros(c))

    def draw(self, rows, rng):
        """(labels, counts with -1 missing, field value indices with -1
        missing, true click probabilities)."""
        counts = rng.geometric(1.0 / (1.0 + self.count_means), (rows, DENSE)) - 1
        counts[rng.random((rows, DENSE)) < 0.1] = -1
        logit = np.full(rows, self.bias)
        logit += (np.log1p(np.maximum(counts, 0)) * self.count_weights).sum(1)
        values = np.empty((rows, SPARSE), dtype=np.int64)
        for k in range(SPARSE):
            values[:, k] = rng.choice(self.cardinality[k], rows,
                                      p=self.popularity[k])
        values[rng.random((rows, SPARSE)) < 0.05] = -1
        # A missing value carries no signal.
        for k in SIGNAL_FIELDS:
            present = values[:, k] >= 0
            logit[present] += self.value_weights[k][values[present, k]]
        probability = 1.0 / (1.0 + np.exp(-logit))
        labels = (rng.random(rows) < probability).astype(np.int64)
        return labels, counts, values, probability


def auc(labels, scores):
    """The area under the ROC curve (ties counted half), by ranks."""
    labels = np.asarray(labels).astype(bool)
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = np.asarray(scores)[order]
    # Average ranks over ties.
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    ends = np.r_[starts[1:], len(scores)]
    for s, e in zip(starts, ends):
        ranks[order[s:e]] = (s + e + 1) / 2.0
    positives = labels.sum()
    negatives = len(labels) - positives
    if not positives or not negatives:
        return float("nan")
    return float((ranks[labels].sum() - positives * (positives + 1) / 2)
                 / (positives * negatives))


def write_with_bayes(path, rows, seed, fmt="tsv"):
    """`write`, and the file's Bayes AUC beside it as <path>.json (what
    report_auc reads); returns the Bayes AUC."""
    bayes = write(path, rows, seed, fmt)
    with open(str(path) + ".json", "w") as out:
        json.dump({"rows": rows, "seed": seed, "bayes_auc": bayes}, out)
    return bayes


def write_train_and_test(train, test, rows, fmt_of=lambda path: "tsv"):
    """A training log of `rows` examples (seed 1) and a held-out one of a
    sixth as many (seed 2), of one planted model, each with its .json;
    `fmt_of(path)` picks each file's format."""
    for path, count, seed in ((train, rows, 1), (test, rows // 6, 2)):
        write_with_bayes(path, count, seed, fmt_of(path))


def report_auc(test_path, labels, scores, min_of_bayes=0.0):
    """Prints the held-out AUC of `scores`, against the Bayes AUC of
    <test_path>.json where it exists; returns the exit status: 1 when the
    AUC is below `min_of_bayes` times the Bayes AUC."""
    held_out = auc(labels, scores)
    bayes = None
    try:
        with open(str(test_path) + ".json") as f:
            bayes = json.load(f)["bayes_auc"]
    except FileNotFoundError:
        pass
    print(f"held-out AUC {held_out:.4f}" +
          (f", Bayes AUC {bayes:.4f} ({held_out / bayes:.3f} of it)"
           if bayes else ""))
    if bayes and held_out < min_of_bayes * bayes:
        print(f"FAIL: below {min_of_bayes} of the Bayes AUC")
        return 1
    return 0


def _tsv_lines(labels, counts, hexes):
    for i in range(len(labels)):
        fields = [str(labels[i])]
        fields += ["" if c < 0 else str(c) for c in counts[i]]
        fields += hexes[i]
        yield "\t".join(fields) + "\n"


def _example(label, counts, hexes):
    """A serialized tf.Example, encoded from the documented wire format
    (no TensorFlow or protobuf needed)."""
    def varint(n):
        n &= 2**64 - 1
        out = bytearray()
        while True:
            byte = n & 0x7F
            n >>= 7
            if n:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                return bytes(out)

    def field(number, payload):
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    def entry(name, feature):
        return field(1, field(1, name.encode()) + field(2, feature))

    entries = [entry("label", field(3, field(1, varint(label))))]
    for j, c in enumerate(counts):
        if c >= 0:
            entries.append(entry(f"I{j + 1}", field(3, field(1, varint(int(c))))))
    for k, h in enumerate(hexes):
        if h:
            entries.append(entry(f"C{k + 1}", field(1, field(1, h.encode()))))
    return field(1, b"".join(entries))


def write(path, rows, seed, fmt="tsv", generator_seed=0):
    """Writes `rows` examples drawn with `seed` (the planted model is
    `generator_seed`'s, the same for a training and a test file) and
    returns the file's Bayes AUC."""
    planted = Planted(generator_seed)
    rng = np.random.default_rng(seed)
    labels, counts, values, probability = planted.draw(rows, rng)
    hexes = [["" if values[i, k] < 0 else "%08x" % planted.hashes[k][values[i, k]]
              for k in range(SPARSE)] for i in range(rows)]
    if fmt == "tsv":
        with open(path, "w") as out:
            out.writelines(_tsv_lines(labels, counts, hexes))
    elif fmt == "tfrecord":
        from kiln_runtime import data
        data.write_records(path, (_example(int(labels[i]), counts[i], hexes[i])
                                  for i in range(rows)))
    else:
        raise ValueError(f"format {fmt!r}: tsv or tfrecord")
    return auc(labels, probability)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", choices=["tsv", "tfrecord"], default="tsv")
    args = parser.parse_args(argv)
    bayes = write_with_bayes(args.path, args.rows, args.seed, args.format)
    print(f"{args.path}: {args.rows} examples, Bayes AUC {bayes:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
