"""kiln.ops.segment_sum against numpy, and kiln.feature_column against
TensorFlow's feature columns (tf.compat.v1.feature_column.input_layer and
linear_model on the same raw batches, embedding tables or weights and, for
the gradients, the same cotangent). The TensorFlow comparisons run where it
imports (the bench virtualenv) and are skipped visibly elsewhere.
"""

import os

import numpy as np
import pytest

import kiln
import kiln.numpy as knp
from kiln import feature_column as fc

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def test_segment_sum_is_numpys():
    rng = np.random.default_rng(0)
    for rows, segments in ((50, 7), (1, 1), (33, 40)):
        data = rng.standard_normal((rows, 3)).astype(np.float32)
        ids = rng.integers(-2, segments + 2, rows)
        expected = np.zeros((segments, 3), np.float32)
        inside = (ids >= 0) & (ids < segments)
        np.add.at(expected, ids[inside], data[inside])
        got = kiln.ops.segment_sum(data, ids, segments)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(
        kiln.ops.segment_sum(np.arange(4.0), np.array([1, 1, 3, 0])), [3, 1, 0, 2])


def test_segment_sum_gradient_gathers_the_cotangent():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((20, 4)).astype(np.float32)
    ids = rng.integers(0, 6, 20)
    weights = rng.standard_normal((6, 4)).astype(np.float32)
    grad = kiln.jit(kiln.grad(
        lambda d: knp.sum(kiln.ops.segment_sum(d, ids, 6) * weights)))(data)
    np.testing.assert_allclose(grad, weights[ids], rtol=1e-6)


def test_segment_sum_refuses_mismatched_ids():
    with pytest.raises(ValueError, match="one id per row"):
        kiln.ops.segment_sum(np.zeros((3, 2), np.float32), np.array([0, 1]), 2)
    with pytest.raises(ValueError, match="pass num_segments"):
        kiln.jit(lambda d, i: kiln.ops.segment_sum(d, i))(
            np.zeros(3, np.float32), np.array([0, 1, 2]))


# --- Against TensorFlow -------------------------------------------------------

COUNTRIES = ["us", "fr", "de", "jp", "br"]


def random_batch(rng, batch):
    """Raw features as kiln_runtime.data's parsers give them."""
    def ragged(draw):
        lengths = rng.integers(0, 4, batch)
        return np.array([draw() for _ in range(lengths.sum())],
                        dtype=object), lengths
    country = ragged(lambda: COUNTRIES[rng.integers(0, 5)]
                     if rng.integers(0, 7) < 5 else "xx%d" % rng.integers(0, 9))
    country = (np.array([c.encode() for c in country[0]], dtype=object),
               country[1])
    home = country[0][::-1].copy(), country[1][::-1].copy()
    item, item_lengths = ragged(lambda: int(rng.integers(0, 60)))
    return {
        "age": rng.uniform(0, 80, (batch, 1)).astype(np.float32),
        "pos": rng.uniform(-3, 3, (batch, 2)).astype(np.float32),
        "country": country,
        "home": home,
        "item": (item.astype(np.int64), item_lengths),
        # One weight per item id.
        "item_weight": (rng.uniform(0.1, 2.0, item_lengths.sum())
                        .astype(np.float32), item_lengths),
        "user": ragged(lambda: b"u%d" % rng.integers(0, 1000)),
        "clicked": (rng.integers(0, 50, int(item_lengths.sum())).astype(np.int64),
                    item_lengths),
    }


def columns_of(module, vocabulary_file, shared_embeddings=None):
    """The same columns built by kiln.feature_column or
    tf.feature_column (`module`), in order. TensorFlow's input_layer takes
    shared embeddings from tf.compat.v1 (`shared_embeddings`)."""
    m = module
    age = m.numeric_column("age", normalizer_fn=lambda x: (x - 40.0) / 20.0)
    pos = m.numeric_column("pos", shape=(2,))
    age_buckets = m.bucketized_column(age, [-1.0, -0.25, 0.0, 0.6])
    pos_buckets = m.bucketized_column(pos, [-1.0, 0.0, 1.5])
    country = m.categorical_column_with_vocabulary_list(
        "country", COUNTRIES, num_oov_buckets=3)
    country_file = m.categorical_column_with_vocabulary_file(
        "home", vocabulary_file, vocabulary_size=4, default_value=-1)
    item = m.categorical_column_with_identity("item", 60)
    clicked = m.categorical_column_with_identity("clicked", 60)
    weighted = m.weighted_categorical_column(item, "item_weight")
    user = m.categorical_column_with_hash_bucket("user", 97)
    cross = m.crossed_column(["country", age_buckets], 31)
    shared = (shared_embeddings or m.shared_embeddings)(
        [item, clicked], 3, combiner="sum")
    return [
        age, pos, age_buckets, pos_buckets,
        m.indicator_column(country),
        m.indicator_column(country_file),
        m.indicator_column(weighted),
        m.indicator_column(cross),
        m.embedding_column(user, 4, combiner="mean"),
        m.embedding_column(weighted, 5, combiner="sqrtn"),
        m.embedding_column(cross, 2, combiner="sum"),
        m.embedding_column(pos_buckets, 3, combiner="mean"),
    ] + list(shared)


def tf_features(tf, raw):
    """The raw batch as TensorFlow's feature dict: ragged pairs become
    SparseTensors."""
    out = {}
    for name, value in raw.items():
        if isinstance(value, tuple):
            values, lengths = value
            rows = np.repeat(np.arange(len(lengths)), lengths)
            cols = np.concatenate([np.arange(n) for n in lengths]) \
                if len(rows) else np.zeros(0, np.int64)
            if values.dtype == object:
                values = np.array(list(values), dtype=object)
            out[name] = tf.sparse.SparseTensor(
                np.stack([rows, cols], 1).astype(np.int64),
                tf.constant(list(values) if values.dtype == object else values),
                [len(lengths), max(int(lengths.max(initial=0)), 1)])
        else:
            out[name] = tf.constant(value)
    return out


def dense_gradients(gradients):
    """TensorFlow's gradients as numpy arrays, an IndexedSlices value (a
    table's sparse gradient) added into zeros of its dense shape."""
    dense = []
    for g in gradients:
        if hasattr(g, "indices"):
            full = np.zeros(g.dense_shape, np.float32)
            np.add.at(full, g.indices, g.values)
            g = full
        dense.append(g)
    return dense


def tensorflow_input_layer(tf, raw, vocabulary_file, params, cotangent):
    """TensorFlow's input_layer on `raw` with the embedding tables set to
    `params`, and the tables' gradients of sum(output * cotangent)."""
    with tf.Graph().as_default():
        columns = columns_of(
            tf.feature_column, vocabulary_file,
            tf.compat.v1.feature_column.shared_embedding_columns)
        output = tf.compat.v1.feature_column.input_layer(
            tf_features(tf, raw), columns)
        tables = {}
        for var in tf.compat.v1.global_variables():
            # ".../<table name>/embedding_weights:0" or the shared table.
            parts = var.name.split("/")
            name = parts[-2] if parts[-1].startswith("embedding_weights") \
                else parts[-1].split(":")[0]
            tables[name] = var
        grads = tf.gradients(tf.reduce_sum(output * cotangent),
                             [tables[n] for n in sorted(tables)])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.tables_initializer())
            for name, var in tables.items():
                var.load(params[name], session)
            out, gs = session.run([output, grads])
    return out, dict(zip(sorted(tables), dense_gradients(gs)))


@pytest.fixture
def vocabulary_file(tmp_path):
    path = tmp_path / "countries.txt"
    path.write_text("\n".join(COUNTRIES) + "\n")
    return str(path)


@pytest.mark.parametrize("seed", [0, 1])
def test_dense_features_equal_tensorflows(vocabulary_file, seed):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(seed)
    raw = random_batch(rng, 24)
    columns = columns_of(fc, vocabulary_file)
    params = fc.init_params(columns, kiln.random.PRNGKey(seed))
    inputs = fc.prepare(columns, raw)
    forward = kiln.jit(lambda p, i: fc.dense_features(columns, i, p))
    ours = forward(params, inputs)
    cotangent = rng.standard_normal(ours.shape).astype(np.float32)
    theirs, tf_grads = tensorflow_input_layer(tf, raw, vocabulary_file,
                                              params, cotangent)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    grads = kiln.jit(kiln.grad(lambda p, i: knp.sum(
        fc.dense_features(columns, i, p) * cotangent)))(params, inputs)
    assert sorted(grads) == sorted(tf_grads)
    for name in grads:
        np.testing.assert_allclose(grads[name], tf_grads[name], rtol=1e-5,
                                   atol=1e-5, err_msg=name)


def linear_columns_of(module, vocabulary_file):
    """Columns for a linear model, built by kiln.feature_column or
    tf.feature_column: numeric, bucketized (categorical in a linear model),
    categorical of every kind, a cross and an indicator (dense)."""
    m = module
    age = m.numeric_column("age", normalizer_fn=lambda x: (x - 40.0) / 20.0)
    pos = m.numeric_column("pos", shape=(2,))
    age_buckets = m.bucketized_column(age, [-1.0, -0.25, 0.0, 0.6])
    country = m.categorical_column_with_vocabulary_list(
        "country", COUNTRIES, num_oov_buckets=3)
    home = m.categorical_column_with_vocabulary_file(
        "home", vocabulary_file, vocabulary_size=4, default_value=-1)
    item = m.categorical_column_with_identity("item", 60)
    return [age, pos, age_buckets, country, home,
            m.weighted_categorical_column(item, "item_weight"),
            m.categorical_column_with_hash_bucket("user", 97),
            m.crossed_column(["country", age_buckets], 31),
            m.indicator_column(m.categorical_column_with_identity("clicked", 60))]


def tensorflow_linear_model(tf, raw, vocabulary_file, params, combiner,
                            cotangent):
    """TensorFlow's linear_model on `raw` with its variables set to
    `params` (keyed as linear_model/<key>), and their gradients of
    sum(output * cotangent)."""
    with tf.Graph().as_default():
        output = tf.compat.v1.feature_column.linear_model(
            tf_features(tf, raw), linear_columns_of(tf.feature_column,
                                                    vocabulary_file),
            units=2, sparse_combiner=combiner)
        variables = {v.name[len("linear_model/"):-len(":0")]: v
                     for v in tf.compat.v1.global_variables()}
        names = sorted(variables)
        grads = tf.gradients(tf.reduce_sum(output * cotangent),
                             [variables[n] for n in names])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.tables_initializer())
            for name, var in variables.items():
                var.load(params[name], session)
            out, gs = session.run([output, grads])
    return out, dict(zip(names, dense_gradients(gs)))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_linear_model_equals_tensorflows(vocabulary_file, combiner):
    tf = pytest.importorskip("tensorflow")
    rng = np.random.default_rng(3)
    raw = random_batch(rng, 24)
    columns = linear_columns_of(fc, vocabulary_file)
    params = fc.init_linear_params(columns, units=2)
    assert all(not v.any() for v in params.values())  # zeros, as TF's
    # Random weights, so that every column's part shows.
    params = {k: rng.standard_normal(v.shape).astype(np.float32)
              for k, v in params.items()}
    inputs = fc.prepare(columns, raw)
    forward = kiln.jit(lambda p, i: fc.linear_model(
        columns, i, p, units=2, sparse_combiner=combiner))
    ours = forward(params, inputs)
    cotangent = rng.standard_normal(ours.shape).astype(np.float32)
    theirs, tf_grads = tensorflow_linear_model(
        tf, raw, vocabulary_file, params, combiner, cotangent)
    assert ours.shape == theirs.shape == (24, 2)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    grads = kiln.jit(kiln.grad(lambda p, i: knp.sum(fc.linear_model(
        columns, i, p, units=2, sparse_combiner=combiner) * cotangent)))(
            params, inputs)
    assert sorted(grads) == sorted(tf_grads)
    for name in grads:
        np.testing.assert_allclose(grads[name], tf_grads[name], rtol=1e-5,
                                   atol=1e-5, err_msg=name)


def test_parse_spec_reads_what_the_columns_need(vocabulary_file):
    spec = fc.make_parse_example_spec(columns_of(fc, vocabulary_file))
    assert sorted(spec) == ["age", "clicked", "country", "home", "item",
                            "item_weight", "pos", "user"]
    assert spec["pos"].shape == (2,)


def test_column_mistakes_are_named():
    with pytest.raises(ValueError, match="outside \\[0, 5\\)"):
        column = fc.indicator_column(fc.categorical_column_with_identity("i", 5))
        fc.prepare([column], {"i": (np.array([1, 7]), np.array([1, 1]))})
    with pytest.raises(KeyError, match="no feature 'i'"):
        fc.prepare([column], {"j": np.zeros((2, 1), np.int64)})
    with pytest.raises(TypeError, match="categorical"):
        fc.dense_features([fc.categorical_column_with_identity("i", 5)], {})
    with pytest.raises(KeyError, match="'i/weights'"):
        fc.linear_model([fc.categorical_column_with_identity("i", 5)], {},
                        {"bias_weights": np.zeros(1, np.float32)})
    with pytest.raises(ValueError, match="sparse_combiner"):
        fc.linear_model([fc.numeric_column("a")], {}, {}, sparse_combiner="max")
    with pytest.raises(ValueError, match="increasing"):
        fc.bucketized_column(fc.numeric_column("a"), [1.0, 1.0])
    with pytest.raises(ValueError, match="two columns named 'c'"):
        fc.prepare([fc.indicator_column(
                        fc.categorical_column_with_identity("c", 5)),
                    fc.embedding_column(
                        fc.categorical_column_with_hash_bucket("c", 5), 2)],
                   {"c": np.zeros((1, 1), np.int64)})
    with pytest.raises(ValueError, match="same number of buckets"):
        fc.shared_embeddings([fc.categorical_column_with_identity("a", 3),
                              fc.categorical_column_with_identity("b", 4)], 2)


@pytest.mark.parametrize("buckets", [31, 0])
def test_crosses_computed_in_the_step_equal_the_pipelines(buckets):
    """crossed_column hashes its combinations in the compiled step
    (FingerprintCat64 on int64 bits, an unsigned modulo); the pipeline's
    C++ cross_hashed (checked against TensorFlow by kiln_runtime's tests)
    gives each example the same ids, for strings (fingerprints with the top
    bit set included), integer ids and a bucketized key, ragged rows and
    empty ones included."""
    rng = np.random.default_rng(11)
    words = np.array([f"w{i}" for i in range(40)], dtype=object)
    lengths = rng.integers(0, 4, 9)
    lengths[3] = 0
    strings = (words[rng.integers(0, 40, lengths.sum())], lengths)
    item = fc.categorical_column_with_identity("item", 1000)
    item_lengths = rng.integers(1, 3, 9)
    items = (rng.integers(0, 1000, item_lengths.sum()), item_lengths)
    age = fc.bucketized_column(fc.numeric_column("age"), [0.0, 0.5])
    ages = rng.standard_normal((9, 1)).astype(np.float32)
    features = {"word": strings, "item": items, "age": ages}
    for keys in (["word", item], [item, "word", age], [age, item]):
        cross = fc.crossed_column(keys, buckets)
        inputs = fc.prepare([fc.indicator_column(cross)] if buckets else
                            [cross], features)
        want_ids, want_lengths, _ = cross._prepare_ids(features)
        step = kiln.jit(lambda inputs: cross._sparse(inputs)[:3])
        ids, rows, weights = step(inputs)
        kept = weights > 0
        got = [sorted(ids[kept][rows[kept] == r]) for r in range(9)]
        starts = np.concatenate([[0], np.cumsum(want_lengths)])
        want = [sorted(want_ids[starts[r]:starts[r + 1]]) for r in range(9)]
        assert got == want, keys
        assert all(0 <= i < (buckets or 2 ** 63) for i in ids[kept])
