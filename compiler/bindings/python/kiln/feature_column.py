"""kiln.feature_column: TensorFlow's feature columns, split where strings
end.

A column describes how a raw feature becomes part of a model's input, as
tf.feature_column does, with TensorFlow's semantics and ids (a model
trained there keeps its embedding rows here). The work is split in two:

- `prepare(columns, features)` runs in the input pipeline, on numpy: it
  turns strings into int64 ids (hash buckets and vocabularies through
  kiln_runtime.data, which gives TensorFlow's ids; a crossed key's
  fingerprints) and lays each categorical column out as a ragged batch of
  ids with their example numbers and weights, padded to a power-of-two
  length so that a compiled step sees few shapes.
- `dense_features(columns, inputs, params)` runs in the compiled step
  (inside kiln.jit, differentiable): normalization, bucketization,
  crossing (FingerprintCat64 of the keys' hashes), indicator (multi-hot)
  vectors and embedding lookups with their combiners as kiln ops (gather,
  then kiln.ops.segment_sum per example).
  Its result is tf.compat.v1.feature_column.input_layer's: the columns'
  dense values concatenated in the order of their names.

    age = fc.numeric_column("age")
    country = fc.categorical_column_with_vocabulary_list("country", ["us", "fr"])
    columns = [fc.bucketized_column(age, [18.0, 30.0]),
               fc.embedding_column(country, 8, combiner="mean")]
    spec = fc.make_parse_example_spec(columns)     # kiln_runtime.data spec
    params = fc.init_params(columns, kiln.random.PRNGKey(0))

    @kiln.jit
    def forward(params, inputs):
        return fc.dense_features(columns, inputs, params)

    for batch in data.Dataset(files, 256, spec=spec):
        out = forward(params, fc.prepare(columns, batch))

Raw features are what kiln_runtime.data's parsers give: a fixed-length
feature's array, a variable-length one's (values, row_lengths).
"""

import math

import numpy as np

from kiln_runtime import data as _data

from . import ops, random
from . import numpy as knp
from ._core import fail

__all__ = ["numeric_column", "bucketized_column",
           "categorical_column_with_identity",
           "categorical_column_with_vocabulary_list",
           "categorical_column_with_vocabulary_file",
           "categorical_column_with_hash_bucket", "crossed_column",
           "weighted_categorical_column", "indicator_column",
           "embedding_column", "shared_embeddings", "make_parse_example_spec",
           "prepare", "dense_features", "linear_model", "init_params",
           "init_linear_params"]


# --- Raw features in the pipeline ---------------------------------------------

def _ragged(value, what):
    """(values, row_lengths) of a raw feature (kiln_runtime.data.as_ragged),
    its mistakes named by the column `what`."""
    try:
        return _data.as_ragged(value)
    except ValueError as error:
        fail(f"{what}: {error}", ValueError)


def _raw(features, key, what):
    if key not in features:
        fail(f"{what}: the batch has no feature '{key}' (it has "
             f"{sorted(features)})", KeyError)
    return features[key]


def _capacity(count):
    """The padded length of `count` ragged values: the next power of two."""
    return 1 << max(count - 1, 0).bit_length() if count > 1 else 1


def _sparse_arrays(ids, lengths, weights=None):
    """(ids, example numbers, weights) of a ragged batch, padded to a power
    of two with id 0 and weight 0 (no contribution)."""
    count = ids.shape[0]
    size = _capacity(count)
    out_ids = np.zeros(size, dtype=np.int64)
    out_ids[:count] = ids
    rows = np.zeros(size, dtype=np.int64)
    rows[:count] = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    out_weights = np.zeros(size, dtype=np.float32)
    out_weights[:count] = 1.0 if weights is None else weights
    return out_ids, rows, out_weights


class _Column:
    """A feature column; `name` is TensorFlow's."""

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"

    def _parse_spec(self, spec):
        for parent in self._parents():
            parent._parse_spec(spec)

    def _prepare(self, features, inputs):
        """Adds the column's compiled-step inputs for a batch to `inputs`:
        by default, those of the columns it reads."""
        for parent in self._parents():
            parent._prepare(features, inputs)

    def _parents(self):
        return ()


class _DenseColumn(_Column):
    """A column with a dense value per example: [batch, width]."""


class _CategoricalColumn(_Column):
    """A column of ids per example, in [0, num_buckets) (negative ones are
    dropped, as TensorFlow drops them)."""

    def _prepare_ids(self, features):
        """(ids, row_lengths, weights or None) of a batch, in numpy."""
        raise NotImplementedError

    def _prepare(self, features, inputs):
        prefix = self.name
        if prefix + "/ids" in inputs:
            return  # read by another column too: made once per batch
        ids, lengths, weights = self._prepare_ids(features)
        (inputs[prefix + "/ids"], inputs[prefix + "/rows"],
         inputs[prefix + "/weights"]) = _sparse_arrays(ids, lengths, weights)
        inputs[prefix + "/batch"] = np.zeros(lengths.shape[0], dtype=np.bool_)

    def _sparse(self, inputs):
        """(ids, example numbers, weights, batch size) in the compiled step;
        a negative id has weight 0 and id 0."""
        prefix = self.name
        ids = knp.asarray(inputs[prefix + "/ids"])
        weights = knp.asarray(inputs[prefix + "/weights"])
        valid = ids >= 0
        return (knp.where(valid, ids, 0), knp.asarray(inputs[prefix + "/rows"]),
                knp.where(valid, weights, 0.0),
                int(inputs[prefix + "/batch"].shape[0]))


# --- Numeric and bucketized ---------------------------------------------------

class NumericColumn(_DenseColumn):
    def __init__(self, key, shape, default_value, normalizer_fn):
        self.key = key
        self.name = key
        self.shape = tuple(int(d) for d in shape)
        self.default_value = default_value
        self.normalizer_fn = normalizer_fn
        self.width = math.prod(self.shape)

    def _parse_spec(self, spec):
        spec[self.key] = _data.FixedLenFeature(self.shape, "float32",
                                               default=self.default_value)

    def _prepare(self, features, inputs):
        value = np.asarray(_raw(features, self.key, self.name), dtype=np.float32)
        inputs[self.key] = value.reshape(value.shape[0], self.width)

    def _value(self, inputs, traced):
        """[batch, width] normalized, traced (kiln ops) or numpy."""
        x = inputs[self.key]
        x = knp.asarray(x) if traced else np.asarray(x, dtype=np.float32)
        return self.normalizer_fn(x) if self.normalizer_fn else x

    def _dense(self, inputs, params):
        return self._value(inputs, traced=True)


def numeric_column(key, shape=(1,), default_value=None, dtype=np.float32,
                   normalizer_fn=None):
    """tf.feature_column.numeric_column: float32 values of `shape` per
    example; `normalizer_fn` (kiln.numpy operations, e.g.
    `lambda x: (x - mean) / std`) runs in the compiled step."""
    if np.dtype(dtype) != np.float32:
        fail(f"numeric_column '{key}': float32 values only, not "
             f"{np.dtype(dtype)}", TypeError)
    if isinstance(shape, int):
        shape = (shape,)
    return NumericColumn(key, shape, default_value, normalizer_fn)


class BucketizedColumn(_DenseColumn, _CategoricalColumn):
    def __init__(self, source, boundaries):
        self.source = source
        self.boundaries = np.asarray(boundaries, dtype=np.float32)
        self.name = f"{source.name}_bucketized"
        self.buckets_per_value = len(self.boundaries) + 1
        self.num_buckets = self.buckets_per_value * source.width
        self.width = self.num_buckets

    def _parents(self):
        return (self.source,)

    # As a dense column, and as a categorical one read by an embedding or
    # indicator, its inputs are its source's (the buckets are computed in
    # the compiled step).
    _prepare = _Column._prepare

    def _buckets(self, inputs, traced):
        """[batch, source width] bucket numbers: how many boundaries are <=
        the value (tf's Bucketize)."""
        x = self.source._value(inputs, traced)
        if not traced:
            return np.searchsorted(self.boundaries, x, side="right")
        count = knp.zeros(x.shape, np.int64)
        for boundary in self.boundaries:
            count = count + knp.astype(x >= float(boundary), np.int64)
        return count

    def _prepare_ids(self, features):
        inputs = {}
        self.source._prepare(features, inputs)
        buckets = self._buckets(inputs, traced=False)
        offsets = np.arange(self.source.width) * self.buckets_per_value
        ids = (buckets + offsets).astype(np.int64)
        return ids.ravel(), np.full(ids.shape[0], ids.shape[1], np.int64), None

    def _sparse(self, inputs):
        buckets = self._buckets(inputs, traced=True)
        batch, width = buckets.shape
        offsets = knp.arange(width, dtype=np.int64) * self.buckets_per_value
        ids = knp.reshape(buckets + offsets, (batch * width,))
        rows = knp.reshape(knp.broadcast_to(
            knp.expand_dims(knp.arange(batch, dtype=np.int64), 1),
            (batch, width)), (batch * width,))
        return ids, rows, knp.ones((batch * width,), np.float32), batch

    def _dense(self, inputs, params):
        buckets = self._buckets(inputs, traced=True)
        batch = buckets.shape[0]
        hot = knp.astype(knp.equal(
            knp.expand_dims(buckets, -1),
            knp.arange(self.buckets_per_value, dtype=np.int64)), np.float32)
        return knp.reshape(hot, (batch, self.width))


def bucketized_column(source_column, boundaries):
    """tf.feature_column.bucketized_column: each value's bucket, the number
    of `boundaries` (sorted) at or below it; dense as one-hot vectors,
    categorical for crosses and embeddings."""
    if not isinstance(source_column, NumericColumn):
        fail("bucketized_column takes a numeric_column", TypeError)
    b = list(boundaries)
    if not b or any(x >= y for x, y in zip(b, b[1:])):
        fail(f"bucketized_column '{source_column.name}': boundaries must be "
             f"a non-empty increasing list, got {b}", ValueError)
    return BucketizedColumn(source_column, b)


# --- Categorical columns, made ids in the pipeline ---------------------------

class _KeyedCategorical(_CategoricalColumn):
    def __init__(self, key, num_buckets, dtype):
        self.key = key
        self.name = key
        self.num_buckets = int(num_buckets)
        self.dtype = dtype

    def _parse_spec(self, spec):
        spec[self.key] = _data.VarLenFeature(self.dtype)

    def _prepare_ids(self, features):
        values, lengths = _ragged(_raw(features, self.key, self.name), self.name)
        return self._ids_of(values), lengths, None


class IdentityColumn(_KeyedCategorical):
    def __init__(self, key, num_buckets, default_value):
        super().__init__(key, num_buckets, "int64")
        self.default_value = default_value

    def _ids_of(self, values):
        ids = np.asarray(values, dtype=np.int64)
        outside = (ids < 0) | (ids >= self.num_buckets)
        if outside.any():
            if self.default_value is None:
                fail(f"categorical_column_with_identity '{self.name}': id "
                     f"{ids[outside][0]} is outside [0, {self.num_buckets}) "
                     "and the column has no default_value", ValueError)
            ids = np.where(outside, self.default_value, ids)
        return ids


class VocabularyColumn(_KeyedCategorical):
    def __init__(self, key, vocabulary, num_oov_buckets, dtype):
        super().__init__(key, vocabulary.id_count, dtype)
        self.vocabulary = vocabulary

    def _ids_of(self, values):
        if self.dtype == "int64":
            values = [str(int(v)) for v in np.asarray(values).ravel()]
        return self.vocabulary.lookup(values)


class HashedColumn(_KeyedCategorical):
    def _ids_of(self, values):
        return _data.hash_bucket(values, self.num_buckets)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """tf.feature_column.categorical_column_with_identity: int64 ids as
    they are; an id outside [0, num_buckets) is `default_value`, or an
    error without one."""
    return IdentityColumn(key, num_buckets, default_value)


def _vocabulary_column(key, vocabulary, num_oov_buckets, dtype):
    dtype = "int64" if dtype is not None and np.dtype(dtype).kind in "iu" \
        else "bytes"
    return VocabularyColumn(key, vocabulary, num_oov_buckets, dtype)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None,
                                            default_value=-1,
                                            num_oov_buckets=0):
    """tf.feature_column.categorical_column_with_vocabulary_list: a value's
    position in the list, else its hash bucket after the list (or
    default_value, which is dropped when negative). Integer vocabularies
    (dtype int64) are matched by their decimal text."""
    tokens = [str(v) if not isinstance(v, (bytes, str)) else v
              for v in vocabulary_list]
    if dtype is None and vocabulary_list and not isinstance(
            vocabulary_list[0], (bytes, str)):
        dtype = np.int64
    table = _data.Vocabulary(tokens, num_oov_buckets=num_oov_buckets,
                             default_value=default_value)
    return _vocabulary_column(key, table, num_oov_buckets, dtype)


def categorical_column_with_vocabulary_file(key, vocabulary_file,
                                            vocabulary_size=None,
                                            num_oov_buckets=0,
                                            default_value=-1, dtype=None):
    """tf.feature_column.categorical_column_with_vocabulary_file: as the
    list form, the file's lines (the first vocabulary_size of them)."""
    table = _data.Vocabulary(file=vocabulary_file, size=vocabulary_size,
                             num_oov_buckets=num_oov_buckets,
                             default_value=default_value)
    return _vocabulary_column(key, table, num_oov_buckets, dtype)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=None):
    """tf.feature_column.categorical_column_with_hash_bucket: FarmHash
    buckets of strings (integers hashed as their decimal text)."""
    kind = "int64" if dtype is not None and np.dtype(dtype).kind in "iu" \
        else "bytes"
    return HashedColumn(key, hash_bucket_size, kind)


class CrossedColumn(_CategoricalColumn):
    def __init__(self, keys, hash_bucket_size, hash_key):
        self.keys = list(keys)
        self.num_buckets = int(hash_bucket_size)
        self.hash_key = hash_key
        self.name = "_X_".join(sorted(k if isinstance(k, str) else k.name
                                      for k in self.keys))

    def _parents(self):
        return tuple(k for k in self.keys if not isinstance(k, str))

    def _parse_spec(self, spec):
        super()._parse_spec(spec)
        for key in self.keys:
            if isinstance(key, str) and key not in spec:
                spec[key] = _data.VarLenFeature("bytes")

    def _prepare_ids(self, features):
        """The crossed ids in numpy, for a column that reads this one's ids
        in the pipeline (a cross of a cross)."""
        parts = []
        for key in self.keys:
            if isinstance(key, str):
                parts.append(_ragged(_raw(features, key, self.name), self.name))
            else:
                ids, lengths, _ = key._prepare_ids(features)
                parts.append((ids, lengths))
        ids, lengths = _data.cross_hashed(parts, self.num_buckets, self.hash_key)
        return ids, lengths, None

    # The crossing runs in the compiled step: the pipeline hands over each
    # key's hashes (a string's Fingerprint64, an id as it is) as a padded
    # [batch, L] matrix with a mask, L a power of two (few signatures); a
    # bucketized key's ids are computed in the step from its source.

    def _prepare(self, features, inputs):
        prefix = self.name
        if prefix + "/batch" in inputs:
            return
        batch = None
        for k, key in enumerate(self.keys):
            if isinstance(key, BucketizedColumn):
                key._prepare(features, inputs)
                continue
            if isinstance(key, str):
                hashes, lengths = _data._column_hashes(
                    _raw(features, key, self.name))
            else:
                ids, lengths, _ = key._prepare_ids(features)
                hashes = ids.astype(np.int64)
            hashes = np.asarray(hashes).view(np.int64)
            width = _capacity(int(lengths.max(initial=0)))
            padded = np.zeros((lengths.shape[0], width), np.int64)
            mask = np.arange(width) < lengths[:, None]
            padded[mask] = hashes
            inputs[f"{prefix}/key{k}/hashes"] = padded
            inputs[f"{prefix}/key{k}/mask"] = mask
            batch = lengths.shape[0]
        if batch is None:
            batch = self.keys[0].source._value(inputs, traced=False).shape[0]
        inputs[prefix + "/batch"] = np.zeros(batch, dtype=np.bool_)

    def _key_hashes(self, k, inputs):
        """Key k's [batch, L] hashes and mask in the compiled step."""
        key = self.keys[k]
        if isinstance(key, BucketizedColumn):
            buckets = key._buckets(inputs, traced=True)
            offsets = (knp.arange(buckets.shape[1], dtype=np.int64)
                       * key.buckets_per_value)
            ids = buckets + offsets
            return ids, knp.ones(ids.shape, np.bool_)
        return (knp.asarray(inputs[f"{self.name}/key{k}/hashes"]),
                knp.asarray(inputs[f"{self.name}/key{k}/mask"]))

    def _sparse(self, inputs):
        batch = int(inputs[self.name + "/batch"].shape[0])
        hashed = knp.full((batch,), _as_int64(self.hash_key), np.int64)
        valid = knp.ones((batch,), np.bool_)
        # Every combination, the last key varying fastest (TensorFlow's
        # order): [batch, L0, L1, ...], FingerprintCat64 along the way.
        for k in range(len(self.keys)):
            values, mask = self._key_hashes(k, inputs)
            width = values.shape[1]
            shape = tuple(hashed.shape) + (width,)
            lead = (batch,) + (1,) * (len(hashed.shape) - 1) + (width,)
            hashed = _fingerprint_cat64(
                knp.broadcast_to(knp.expand_dims(hashed, -1), shape),
                knp.broadcast_to(knp.reshape(values, lead), shape))
            valid = knp.logical_and(
                knp.broadcast_to(knp.expand_dims(valid, -1), shape),
                knp.broadcast_to(knp.reshape(mask, lead), shape))
        count = 1
        for d in hashed.shape[1:]:
            count *= int(d)
        modulus = self.num_buckets if self.num_buckets > 0 else _INT64_MAX
        ids = knp.reshape(_unsigned_mod(hashed, modulus), (batch * count,))
        rows = knp.reshape(knp.broadcast_to(
            knp.expand_dims(knp.arange(batch, dtype=np.int64), 1),
            (batch, count)), (batch * count,))
        weights = knp.astype(knp.reshape(valid, (batch * count,)), np.float32)
        return ids, rows, weights, batch


_INT64_MAX = (1 << 63) - 1


def _as_int64(value):
    """The int64 with the bits of the uint64 `value`."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value > _INT64_MAX else value


def _shift_mix(v):
    """v ^ (v >> 47), the shift logical (uint64), on int64 bits."""
    return knp.bitwise_xor(v, knp.bitwise_and(knp.right_shift(v, 47),
                                              (1 << 17) - 1))


_K_MUL = _as_int64(0xc6a4a7935bd1e995)


def _fingerprint_cat64(running, next_hash):
    """TensorFlow's FingerprintCat64 on uint64 values held as int64 bits
    (products wrap alike; kiln_runtime.data's cross_hashed computes the
    same in the pipeline)."""
    result = knp.bitwise_xor(running, _K_MUL)
    result = knp.bitwise_xor(result, _shift_mix(next_hash * _K_MUL) * _K_MUL)
    result = result * _K_MUL
    return _shift_mix(_shift_mix(result) * _K_MUL)


def _unsigned_mod(h, modulus):
    """The uint64 held by the int64 bits `h`, modulo `modulus` (> 0): a
    negative h stands for 2^63 + (h & INT64_MAX). low + high stays below
    2^63 for every modulus."""
    high = (1 << 63) % modulus
    modulus = knp.asarray(np.int64(modulus))
    low = knp.remainder(knp.bitwise_and(h, _INT64_MAX), modulus)
    return knp.where(h >= 0, knp.remainder(h, modulus),
                     knp.remainder(low + high, modulus))


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """tf.feature_column.crossed_column: every combination of one value of
    each key (a raw feature's name, or a categorical column's ids) per
    example, hashed as tf.sparse.cross_hashed hashes it."""
    if len(keys) < 2:
        fail("crossed_column needs at least two keys", ValueError)
    for key in keys:
        if isinstance(key, HashedColumn):
            fail("crossed_column: cross the raw feature instead of a "
                 "hash-bucket column (as TensorFlow requires)", ValueError)
    return CrossedColumn(keys, hash_bucket_size,
                         _data.DEFAULT_CROSS_HASH_KEY if hash_key is None
                         else hash_key)


class WeightedColumn(_CategoricalColumn):
    def __init__(self, categorical, weight_key):
        self.categorical = categorical
        self.weight_key = weight_key
        self.num_buckets = categorical.num_buckets
        self.name = f"{categorical.name}_weighted_by_{weight_key}"

    def _parents(self):
        return (self.categorical,)

    def _parse_spec(self, spec):
        super()._parse_spec(spec)
        spec[self.weight_key] = _data.VarLenFeature("float32")

    def _prepare_ids(self, features):
        ids, lengths, _ = self.categorical._prepare_ids(features)
        weights, weight_lengths = _ragged(
            _raw(features, self.weight_key, self.name), self.name)
        if not np.array_equal(lengths, weight_lengths):
            fail(f"weighted_categorical_column '{self.name}': the weights do "
                 "not have one value per id in every example", ValueError)
        return ids, lengths, np.asarray(weights, dtype=np.float32)


def weighted_categorical_column(categorical_column, weight_feature_key):
    """tf.feature_column.weighted_categorical_column: each id weighted by
    the value at the same place of another feature."""
    return WeightedColumn(categorical_column, weight_feature_key)


# --- Dense forms of categorical columns --------------------------------------

class IndicatorColumn(_DenseColumn):
    def __init__(self, categorical):
        self.categorical = categorical
        self.name = f"{categorical.name}_indicator"
        self.width = categorical.num_buckets

    def _parents(self):
        return (self.categorical,)

    def _dense(self, inputs, params):
        ids, rows, weights, batch = self.categorical._sparse(inputs)
        hot = knp.astype(knp.equal(knp.expand_dims(ids, -1),
                                   knp.arange(self.width, dtype=np.int64)),
                         np.float32) * knp.expand_dims(weights, -1)
        return ops.segment_sum(hot, rows, batch)


def indicator_column(categorical_column):
    """tf.feature_column.indicator_column: a multi-hot vector of the ids
    (each id's count, or its summed weights)."""
    return IndicatorColumn(categorical_column)


_COMBINERS = ("sum", "mean", "sqrtn")


def _combine(table, ids, rows, weights, batch, combiner):
    """tf.nn.safe_embedding_lookup_sparse: the weighted rows summed per
    example, divided by the weights' sum (mean) or the root of their
    squares' sum (sqrtn); an example without ids gets zeros."""
    looked_up = knp.take(table, ids, axis=0) * knp.expand_dims(weights, -1)
    total = ops.segment_sum(looked_up, rows, batch)
    if combiner == "sum":
        return total
    scale = weights if combiner == "mean" else weights * weights
    norm = ops.segment_sum(scale, rows, batch)
    if combiner == "sqrtn":
        norm = knp.sqrt(norm)
    norm = knp.where(norm > 0, norm, 1.0)
    return total / knp.expand_dims(norm, -1)


class EmbeddingColumn(_DenseColumn):
    def __init__(self, categorical, dimension, combiner, name, param_name):
        self.categorical = categorical
        self.width = int(dimension)
        self.combiner = combiner
        self.name = name
        self.param_name = param_name
        self.stddev = 1.0 / math.sqrt(self.width)

    def _parents(self):
        return (self.categorical,)

    def _dense(self, inputs, params):
        if self.param_name not in params:
            fail(f"embedding column '{self.name}': params has no table "
                 f"'{self.param_name}' (init_params makes it)", KeyError)
        ids, rows, weights, batch = self.categorical._sparse(inputs)
        return _combine(knp.asarray(params[self.param_name]), ids, rows,
                        weights, batch, self.combiner)


def _check_embedding(categorical, dimension, combiner):
    if not isinstance(categorical, _CategoricalColumn):
        fail("an embedding column takes a categorical column", TypeError)
    if combiner not in _COMBINERS:
        fail(f"embedding combiner must be one of {_COMBINERS}, got "
             f"{combiner!r}", ValueError)
    if int(dimension) < 1:
        fail(f"embedding dimension must be at least 1, got {dimension}",
             ValueError)


def embedding_column(categorical_column, dimension, combiner="mean"):
    """tf.feature_column.embedding_column: a learned [num_buckets,
    dimension] table (params["<name>_embedding"]), its rows of an
    example's ids combined by `combiner` (sum, mean or sqrtn, weighted by a
    weighted column's weights)."""
    _check_embedding(categorical_column, dimension, combiner)
    name = f"{categorical_column.name}_embedding"
    return EmbeddingColumn(categorical_column, dimension, combiner, name, name)


def shared_embeddings(categorical_columns, dimension, combiner="mean",
                      shared_embedding_collection_name=None):
    """tf.feature_column.shared_embeddings: embedding columns over one
    table, for categorical columns of the same number of buckets."""
    buckets = {c.num_buckets for c in categorical_columns}
    if len(buckets) != 1:
        fail("shared_embeddings: the categorical columns must have the same "
             f"number of buckets, got {sorted(buckets)}", ValueError)
    name = shared_embedding_collection_name or "_".join(
        sorted(c.name for c in categorical_columns)) + "_shared_embedding"
    columns = []
    for categorical in categorical_columns:
        _check_embedding(categorical, dimension, combiner)
        columns.append(EmbeddingColumn(
            categorical, dimension, combiner,
            f"{categorical.name}_shared_embedding", name))
    return columns


# --- Whole batches -------------------------------------------------------------

def make_parse_example_spec(columns):
    """The kiln_runtime.data parse spec of the raw features the columns
    read (tf.feature_column.make_parse_example_spec)."""
    spec = {}
    for column in columns:
        column._parse_spec(spec)
    return spec


def _checked_columns(columns, what, categorical=False):
    """The columns in the order of their names, each dense (or, with
    `categorical`, either), and no two distinct ones (also among the
    columns they read) of one name: their inputs would share keys."""
    named = {}

    def claim(column):
        other = named.setdefault(column.name, column)
        if other is not column:
            fail(f"{what}: two columns named '{column.name}' ({other!r} and "
                 f"{column!r}); a name (the feature's key) may serve only "
                 "one column", ValueError)
        for parent in column._parents():
            claim(parent)

    for column in columns:
        if not isinstance(column, _Column):
            fail(f"{what}: {column!r} is not a feature column", TypeError)
        if not categorical and not isinstance(column, _DenseColumn):
            fail(f"{what}: {column.name} is categorical; wrap it in "
                 "indicator_column or embedding_column", TypeError)
        claim(column)
    return sorted(columns, key=lambda c: c.name)


def prepare(columns, features):
    """The compiled step's inputs for a parsed batch (numpy, in the
    pipeline): numeric values as float32 [batch, width], and for each
    categorical column its ids, example numbers and weights (keys
    "<column>/ids", "/rows", "/weights", "/batch"). `columns` may mix the
    dense columns of dense_features and the categorical ones of
    linear_model (a wide and deep model's)."""
    inputs = {}
    for column in _checked_columns(columns, "feature_column.prepare",
                                 categorical=True):
        column._prepare(features, inputs)
    return inputs


def dense_features(columns, inputs, params=None):
    """tf.compat.v1.feature_column.input_layer: the columns' dense values,
    [batch, sum of widths], in the order of their names. `inputs` is
    prepare's result; `params` holds the embedding tables."""
    columns = _checked_columns(columns, "feature_column.dense_features")
    parts = [knp.astype(c._dense(inputs, params or {}), np.float32)
             for c in columns]
    return parts[0] if len(parts) == 1 else knp.concatenate(parts, axis=1)


def linear_model(columns, inputs, params, units=1, sparse_combiner="sum"):
    """tf.compat.v1.feature_column.linear_model: [batch, units], the sum
    over the columns (in the order of their names) of
    - for a categorical column (a bucketized one too), the rows of its
      weights at the example's ids, combined by `sparse_combiner` (sum,
      mean or sqrtn, weighted by a weighted column's weights);
    - for a dense column, its value times its weights;
    plus the bias. `params` holds "<column>/weights" ([num_buckets or
    width, units]) and "bias_weights" ([units]), which init_linear_params
    makes as TensorFlow does (zeros), and the tables of embedding columns
    (init_params). `inputs` is prepare's result. The wide part of a wide
    and deep model."""
    if sparse_combiner not in _COMBINERS:
        fail(f"linear_model: sparse_combiner must be one of {_COMBINERS}, "
             f"got {sparse_combiner!r}", ValueError)

    def weights(name, shape):
        if name not in params:
            fail(f"linear_model: params has no '{name}' (init_linear_params "
                 "makes it)", KeyError)
        w = knp.asarray(params[name])
        if tuple(w.shape) != shape:
            fail(f"linear_model: params['{name}'] has shape "
                 f"{tuple(w.shape)}, the column needs {shape}", ValueError)
        return w

    total = None
    for column in _checked_columns(columns, "feature_column.linear_model",
                                 categorical=True):
        if isinstance(column, _CategoricalColumn):
            w = weights(column.name + "/weights", (column.num_buckets, units))
            ids, rows, ws, batch = column._sparse(inputs)
            part = _combine(w, ids, rows, ws, batch, sparse_combiner)
        else:
            w = weights(column.name + "/weights", (column.width, units))
            part = knp.astype(column._dense(inputs, params), np.float32) @ w
        total = part if total is None else total + part
    if total is None:
        fail("linear_model: no columns", ValueError)
    return total + weights("bias_weights", (units,))


def init_linear_params(columns, units=1):
    """linear_model's weights for `columns`, zeros as TensorFlow starts
    them: {"<column>/weights": [num_buckets or width, units],
    "bias_weights": [units]} float32."""
    params = {"bias_weights": np.zeros(units, np.float32)}
    for column in _checked_columns(columns, "feature_column.init_linear_params",
                                 categorical=True):
        rows = (column.num_buckets if isinstance(column, _CategoricalColumn)
                else column.width)
        params[column.name + "/weights"] = np.zeros((rows, units), np.float32)
    return params


def init_params(columns, key):
    """The embedding tables of `columns`: {name: [num_buckets, dimension]}
    float32, drawn as TensorFlow's default initializer draws them (a
    normal truncated at two standard deviations, stddev 1/sqrt(dimension)),
    one key per table."""
    tables = {}
    for column in columns:
        if isinstance(column, EmbeddingColumn) and column.param_name not in tables:
            tables[column.param_name] = (column.categorical.num_buckets,
                                         column.width, column.stddev)
    params = {}
    keys = random.split(key, max(len(tables), 1))
    for index, (name, (rows, width, stddev)) in enumerate(sorted(tables.items())):
        draw = random.truncated_normal(keys[index], -2.0, 2.0, (rows, width))
        params[name] = np.asarray(draw, dtype=np.float32) * np.float32(stddev)
    return params

