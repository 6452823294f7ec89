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

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature",
           "Dataset", "read_records", "write_records", "parse_example",
           "parse_sequence_example", "batches", "read_criteo", "fingerprint64",
           "hash_bucket", "Vocabulary", "cross_hashed", "as_ragged",
           "DEFAULT_CROSS_HASH_KEY"]

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

    def _sequence_entry(self, name):
        return (name, self.dtype, True, [], True, None)


class FixedLenSequenceFeature:
    """A feature list of a tf.SequenceExample with `shape` values per step
    (tf.io.FixedLenSequenceFeature): parsed as [batch, longest, shape...],
    records with fewer steps padded with `default` (one value; zeros or
    empty strings without it). A record without the list is an error
    unless `allow_missing`, when it has no steps."""

    def __init__(self, shape, dtype, allow_missing=False, default=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = _type_name(dtype)
        self.allow_missing = bool(allow_missing)
        self.default = default

    def _sequence_entry(self, name):
        default = self.default
        if default is not None:
            if self.dtype == "bytes":
                default = [default.encode() if isinstance(default, str)
                           else bytes(default)]
            else:
                default = [default]
        return (name, self.dtype, False, list(self.shape), self.allow_missing,
                default)


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

    A bad record is an error that names its file, its number and what is
    wrong, unless `skip_bad_records`: then it is left out of its batch and
    counted (`skipped`, with the last one's message in `last_skipped`), as
    tf.data's ignore_errors() does. Bad is a record whose data's CRC does
    not match, or, with a spec, one that does not parse by it; a damaged
    framing (the length's CRC, a truncated record, a broken compressed
    stream) loses the rest of its file, counted as one. A batch may then
    hold fewer records, unless drop_remainder drops it."""

    def __init__(self, files, batch_size, *, shuffle_buffer=0, seed=0,
                 rank=0, ranks=1, prefetch=2, drop_remainder=False,
                 compression="auto", spec=None, skip_bad_records=False):
        if isinstance(files, (str, bytes)) or hasattr(files, "__fspath__"):
            files = [files]
        self._args = ([str(f) for f in files], compression, int(batch_size),
                      bool(drop_remainder), int(shuffle_buffer), int(seed),
                      int(rank), int(ranks), int(prefetch),
                      bool(skip_bad_records))
        self._spec = spec
        self._batch_size = int(batch_size)
        self._skip_bad = bool(skip_bad_records)
        self._drop_remainder = bool(drop_remainder)
        #: Bad records skipped in the epochs iterated so far, and the
        #: message of the last one (skip_bad_records).
        self.skipped, self.last_skipped = 0, None
        # Made now so that bad options fail here; it serves the first
        # epoch (its prefetching starts now too).
        self._first = _runtime.RecordDataset(*self._args)

    def __iter__(self):
        dataset, self._first = self._first, None
        if dataset is None:
            dataset = _runtime.RecordDataset(*self._args)
        counted = 0  # of the damaged records the reader skipped
        while True:
            batch = dataset.next()
            count, last = dataset.skipped()
            if count > counted:
                self.skipped += count - counted
                self.last_skipped, counted = last, count
            if batch is None:
                return
            if self._spec is None:
                yield batch
                continue
            parsed = self._parse(batch)
            if parsed is not None:
                yield parsed

    def _parse(self, batch):
        """The batch parsed by the spec; with skip_bad_records, the records
        that parse (None if none does), the others counted."""
        if not self._skip_bad:
            return parse_example(batch, self._spec)
        try:
            return parse_example(batch, self._spec)
        except ValueError:
            pass
        good = []
        for record in batch:
            try:
                parse_example([record], self._spec)
                good.append(record)
            except ValueError as error:
                self.skipped += 1
                self.last_skipped = str(error)
        if not good or (self._drop_remainder and len(good) < self._batch_size):
            return None
        return parse_example(good, self._spec)


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


_sequence_parsers = {}


def parse_sequence_example(records, context_features=None,
                           sequence_features=None):
    """Parses a batch of serialized tf.SequenceExample `records` as
    tf.io.parse_sequence_example does, into (context, feature_lists,
    feature_list_lengths):

    - context: {name: array} for `context_features` as parse_example;
    - feature_lists: for each FixedLenSequenceFeature of
      `sequence_features`, [batch, longest, shape...] (padded); for each
      VarLenFeature, (values, steps per record, values per step);
    - feature_list_lengths: {name: [batch] steps per record} of the
      fixed-length lists.
    """
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    context_entries = tuple(f._entry(n) for n, f in context_features.items())
    sequence_entries = tuple(f._sequence_entry(n)
                             for n, f in sequence_features.items())
    key = repr((context_entries, sequence_entries))
    parser = _sequence_parsers.get(key)
    if parser is None:
        parser = _sequence_parsers[key] = _runtime.SequenceExampleParser(
            list(context_entries), list(sequence_entries))
    parsed_context, parsed_lists = parser.parse([bytes(r) for r in records])
    context = {}
    for (name, _, ragged, _, _), (values, lengths) in zip(context_entries,
                                                          parsed_context):
        context[name] = (values, lengths) if ragged else values
    lists, lengths = {}, {}
    for (name, _, ragged, _, _, _), (values, steps, counts) in zip(
            sequence_entries, parsed_lists):
        if ragged:
            lists[name] = (values, steps, counts)
        else:
            lists[name] = values
            lengths[name] = steps
    return context, lists, lengths


def read_criteo(paths, batch_size, rank=0, ranks=1, prefetch=2):
    """Yields {"label": [n], "dense": [n, 13], "sparse": [n, 26]} int64
    arrays from Criteo-format click logs (tab-separated label, 13 counts,
    26 hex-hashed categorical values), n <= batch_size per batch, file
    after file. A missing count is 0, a missing categorical value -1;
    DLRM's transforms (log(1 + x) of the counts, the categoricals modulo
    their tables' sizes) are the model's to apply. With ranks > 1, only
    example i (counted over the files, from 0) with i % ranks == rank is
    read, as Dataset shards records: ranks read disjoint examples and
    together every one once. `prefetch` batches are parsed ahead on a
    background thread (0: each when it is asked for), so that a training
    step does not wait for the parser. A file that cannot be opened is an
    OSError before the first batch."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    if int(batch_size) < 1:
        raise ValueError("the batch size must be at least 1")
    dataset = _runtime.CriteoDataset([str(p) for p in paths], int(batch_size),
                                     int(rank), int(ranks), int(prefetch))
    return _criteo_batches(dataset)


def _criteo_batches(dataset):
    while True:
        batch = dataset.next()
        if batch is None:
            return
        labels, dense, sparse = batch
        yield {"label": labels, "dense": dense, "sparse": sparse}



# --- Categorical features: the ids TensorFlow gives the same values --------

#: tf.sparse.cross_hashed's (and crossed_column's) hash key by default.
DEFAULT_CROSS_HASH_KEY = 0xDECAFCAFFE


def _values_array(values):
    """`values` as a numpy array: strings (bytes or str) as objects, so that
    neither is truncated nor converted."""
    if isinstance(values, np.ndarray):
        return values.astype(object) if values.dtype.kind in "SU" else values
    array = np.asarray(values)
    # Made again as objects: numpy's bytes dtype drops trailing NULs.
    return np.asarray(values, dtype=object) if array.dtype.kind in "SU" else array


def as_ragged(feature):
    """(values, row_lengths) of a parsed feature: a variable-length
    feature's pair as it is, a fixed-length feature's [batch, ...] array as
    its values row by row (each row's count the same)."""
    if isinstance(feature, tuple):
        values, lengths = feature
        return _values_array(values), np.asarray(lengths, dtype=np.int64)
    array = _values_array(feature)
    if array.ndim == 0:
        raise ValueError("a feature needs a batch dimension")
    rows = array.shape[0]
    array = array.reshape(rows, -1)
    return array.ravel(), np.full(rows, array.shape[1], dtype=np.int64)


def fingerprint64(values):
    """FarmHash's Fingerprint64 of each string (bytes, or str as UTF-8),
    TensorFlow's tf.fingerprint: uint64 [n]."""
    return _runtime.fingerprint64(list(np.ravel(np.asarray(values, dtype=object))))


def hash_bucket(values, num_buckets):
    """Each value's bucket as tf.strings.to_hash_bucket_fast gives it:
    Fingerprint64 modulo `num_buckets`. Integers are hashed as their
    decimal text, as categorical_column_with_hash_bucket and Keras's
    Hashing layer hash them. The result has the values' shape."""
    array = _values_array(values)
    if array.dtype.kind in "iu":
        out = _runtime.hash_bucket_ints(array.astype(np.int64).ravel(),
                                        int(num_buckets))
    elif array.dtype.kind in "SUO":
        out = _runtime.hash_bucket_bytes(list(array.ravel()), int(num_buckets))
    else:
        raise ValueError(f"hash_bucket takes strings or integers, not {array.dtype}")
    return out.reshape(array.shape)


class Vocabulary:
    """String tokens to ids as categorical_column_with_vocabulary_list (or
    _file) and StringLookup without its reserved ids: a token's position in
    `tokens` (or its line in `file`, the first `size` lines when given); a
    token outside it, the vocabulary's size plus its hash bucket among
    `num_oov_buckets`, or `default_value` when there are none."""

    def __init__(self, tokens=None, *, file=None, size=None, num_oov_buckets=0,
                 default_value=-1):
        if (tokens is None) == (file is None):
            raise ValueError("a Vocabulary takes tokens or a file, one of them")
        self._table = _runtime.Vocabulary(
            None if tokens is None else list(tokens),
            None if file is None else str(file),
            -1 if size is None else int(size), int(num_oov_buckets),
            int(default_value))

    @property
    def id_count(self):
        """The number of ids: the tokens and the out-of-vocabulary buckets."""
        return self._table.id_count

    def lookup(self, values):
        """The id of each string (or str) in `values`, in their shape."""
        array = np.asarray(values, dtype=object)
        return self._table.lookup(list(array.ravel())).reshape(array.shape)


def _column_hashes(column):
    """(hashes uint64, row_lengths) of a crossed column: (values,
    row_lengths) or a [batch] / [batch, k] array; strings by their
    fingerprint, integers as they are."""
    values, lengths = as_ragged(column)
    if values.dtype.kind == "O":
        hashes = fingerprint64(values)
    elif values.dtype.kind in "iu":
        hashes = values.astype(np.int64).view(np.uint64)
    else:
        raise ValueError(f"crossed columns hold strings or integers, not {values.dtype}")
    return hashes, lengths


def cross_hashed(columns, num_buckets=0, hash_key=DEFAULT_CROSS_HASH_KEY):
    """tf.sparse.cross_hashed on ragged or dense columns: for each row,
    every combination of one value of each column (the last column varying
    fastest), hashed by FingerprintCat64 from `hash_key` and taken modulo
    `num_buckets` (0: modulo the largest int64). Returns (ids,
    row_lengths)."""
    hashed = [_column_hashes(c) for c in columns]
    return _runtime.cross_hashed([h for h, _ in hashed], [n for _, n in hashed],
                                 int(num_buckets), int(hash_key))
