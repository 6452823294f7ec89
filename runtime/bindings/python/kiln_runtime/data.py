"""Training data in from record files: TFRecord and tf.Example.

    from kiln_runtime import data

    spec = {"label": data.FixedLenFeature((), "int64"),
            "dense": data.FixedLenFeature((13,), "float32", default=0.0),
            "ids": data.VarLenFeature("int64")}
    for batch in data.batches(data.read_records(["train.tfrecord.gz"]), 256):
        features = data.parse_example(batch, spec)
        features["label"]          # int64 [256]
        features["dense"]          # float32 [256, 13]
        values, lengths = features["ids"]   # the ragged ids, lengths [256]

`read_records` checks both CRCs of every record and reads gzip and zlib
files (`compression="auto"` goes by the extension); damage raises
ValueError naming the file, the record and its offset. `parse_example`
works as `tf.io.parse_example`: a fixed-length feature fills its shape in
every record (or takes its default where a record lacks it), a
variable-length one gives its values concatenated with each record's
count. docs/data.md has the details.
"""

import numpy as np

from . import _runtime

__all__ = ["FixedLenFeature", "VarLenFeature", "Dataset", "read_records",
           "write_records", "parse_example", "batches", "read_criteo"]

_TYPES = {"int64": "int64", "float32": "float32", "float": "float32",
          "bytes": "bytes", "string": "bytes"}


def _type_name(dtype):
    """"int64", "float32" or "bytes" for a name or numpy dtype."""
    if isinstance(dtype, str) and dtype in _TYPES:
        return _TYPES[dtype]
    try:
        kind = np.dtype(dtype)
    except TypeError:
        kind = None
    if kind is not None and kind.kind in "SO":
        return "bytes"
    if kind is not None and kind.name in _TYPES:
        return _TYPES[kind.name]
    raise ValueError(f"feature dtype {dtype!r}: int64, float32 or bytes")


class FixedLenFeature:
    """A feature with `shape` values in every record (tf.io.FixedLenFeature);
    `default` (one value, or the shape's number of them) fills in where a
    record lacks it."""

    def __init__(self, shape, dtype, default=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = _type_name(dtype)
        self.default = default

    def _entry(self, name):
        default = self.default
        if default is not None:
            try:
                default = list(default) if not isinstance(default, (bytes, str)) \
                    else [default]
            except TypeError:
                default = [default]
            if self.dtype == "bytes":
                default = [d.encode() if isinstance(d, str) else bytes(d)
                           for d in default]
        return (name, self.dtype, False, list(self.shape), default)


class VarLenFeature:
    """A feature with any number of values per record (tf.io.VarLenFeature):
    parsed as (values, row_lengths)."""

    def __init__(self, dtype):
        self.dtype = _type_name(dtype)

    def _entry(self, name):
        return (name, self.dtype, True, [], None)


class Dataset:
    """Batches of records (lists of bytes) from TFRecord files, one epoch
    per iteration: this rank's share (record i goes to rank i % ranks),
    shuffled through a buffer of `shuffle_buffer` records by a generator
    seeded with `seed` (the same order on every machine; pass a new seed per
    epoch for a new order), and prepared `prefetch` batches ahead on a
    background thread. With `spec` ({name: FixedLenFeature or
    VarLenFeature}) each batch is parsed as parse_example does.

        for batch in data.Dataset(files, 256, shuffle_buffer=10000, seed=epoch,
                                  rank=rank, ranks=ranks, spec=spec):
            step(batch["label"], batch["dense"])
    """

    def __init__(self, files, batch_size, *, shuffle_buffer=0, seed=0,
                 rank=0, ranks=1, prefetch=2, drop_remainder=False,
                 compression="auto", spec=None):
        if isinstance(files, (str, bytes)) or hasattr(files, "__fspath__"):
            files = [files]
        self._args = ([str(f) for f in files], compression, int(batch_size),
                      bool(drop_remainder), int(shuffle_buffer), int(seed),
                      int(rank), int(ranks), int(prefetch))
        self._spec = spec
        # Made now so that bad options fail here; it serves the first
        # epoch (its prefetching starts now too).
        self._first = _runtime.RecordDataset(*self._args)

    def __iter__(self):
        dataset, self._first = self._first, None
        if dataset is None:
            dataset = _runtime.RecordDataset(*self._args)
        while True:
            batch = dataset.next()
            if batch is None:
                return
            yield batch if self._spec is None else parse_example(batch, self._spec)


def read_records(paths, compression="auto"):
    """Yields the records of each TFRecord file in `paths` (a path or a
    list of them) in order, as bytes."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    for path in paths:
        reader = _runtime.TFRecordReader(str(path), compression)
        while True:
            record = reader.next()
            if record is None:
                break
            yield record


def write_records(path, records, compression="auto"):
    """Writes `records` (bytes each) to the TFRecord file `path`."""
    writer = _runtime.TFRecordWriter(str(path), compression)
    for record in records:
        writer.write(bytes(record))
    writer.close()


def batches(records, size, drop_remainder=False):
    """Lists of `size` consecutive records (the last one shorter unless
    `drop_remainder`)."""
    batch = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch and not drop_remainder:
        yield batch


_parsers = {}


def parse_example(records, features):
    """{name: array} for a batch of serialized tf.Example `records` by the
    spec `features` ({name: FixedLenFeature or VarLenFeature}); a
    variable-length feature's entry is (values, row_lengths). Strings are
    numpy object arrays of bytes."""
    entries = tuple(f._entry(name) for name, f in features.items())
    key = repr(entries)
    parser = _parsers.get(key)
    if parser is None:
        parser = _parsers[key] = _runtime.ExampleParser(list(entries))
    parsed = parser.parse([bytes(r) for r in records])
    out = {}
    for (name, _, ragged, _, _), (values, lengths) in zip(entries, parsed):
        out[name] = (values, lengths) if ragged else values
    return out


def read_criteo(paths, batch_size):
    """Yields {"label": [n], "dense": [n, 13], "sparse": [n, 26]} int64
    arrays from Criteo-format click logs (tab-separated label, 13 counts,
    26 hex-hashed categorical values), n <= batch_size per batch, file
    after file. A missing count is 0, a missing categorical value -1;
    DLRM's transforms (log(1 + x) of the counts, the categoricals modulo
    their tables' sizes) are the model's to apply."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    for path in paths:
        reader = _runtime.CriteoReader(str(path))
        while True:
            batch = reader.next(int(batch_size))
            if batch is None:
                break
            labels, dense, sparse = batch
            yield {"label": labels, "dense": dense, "sparse": sparse}

