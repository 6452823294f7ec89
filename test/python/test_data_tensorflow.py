"""kiln_runtime.data against TensorFlow itself: TFRecord files that
tf.io.TFRecordWriter writes (plain, GZIP, ZLIB) read by kiln record for
record, files kiln writes read back by tf.data.TFRecordDataset, and batches
of tf.train.Example parsed by kiln equal to tf.io.parse_example's on the
same records and spec. The independent `tfrecord` package's files are
read too. Runs where TensorFlow imports (the bench virtualenv), skipped
visibly elsewhere.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow")

from kiln_runtime import data  # noqa: E402

COMPRESSIONS = {"": ".tfrecord", "GZIP": ".tfrecord.gz", "ZLIB": ".tfrecord.zz"}


def random_examples(count, seed):
    """`count` serialized tf.train.Examples with features of every kind:
    a label, a fixed-length float vector (absent in some records), ragged
    int64 ids (some records without any), a ragged list of strings and a
    fixed string."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(count):
        feature = {
            "label": tf.train.Feature(int64_list=tf.train.Int64List(
                value=[int(rng.integers(0, 2))])),
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(
                value=rng.integers(-2**40, 2**40, rng.integers(0, 6)).tolist())),
            "words": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[bytes(rng.integers(97, 123, rng.integers(0, 9)).astype(np.uint8))
                       for _ in range(rng.integers(0, 4))])),
            "country": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[b"c%d" % rng.integers(0, 50)])),
        }
        if i % 3:
            feature["dense"] = tf.train.Feature(float_list=tf.train.FloatList(
                value=rng.standard_normal(4).astype(np.float32).tolist()))
        records.append(tf.train.Example(features=tf.train.Features(
            feature=feature)).SerializeToString())
    return records


@pytest.fixture(scope="module")
def records():
    return random_examples(300, seed=7)


def tf_write(path, records, compression):
    options = tf.io.TFRecordOptions(compression_type=compression)
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for record in records:
            writer.write(record)


@pytest.mark.parametrize("compression", sorted(COMPRESSIONS))
def test_reads_files_tensorflow_writes(tmp_path, records, compression):
    path = tmp_path / ("tf" + COMPRESSIONS[compression])
    tf_write(path, records, compression)
    assert list(data.read_records(path)) == records
    batches = [r for batch in data.Dataset(path, 64, prefetch=2) for r in batch]
    assert batches == records


@pytest.mark.parametrize("compression", sorted(COMPRESSIONS))
def test_tensorflow_reads_files_kiln_writes(tmp_path, records, compression):
    path = tmp_path / ("kiln" + COMPRESSIONS[compression])
    data.write_records(path, records)
    read = [r.numpy() for r in tf.data.TFRecordDataset(
        str(path), compression_type=compression)]
    assert read == records


def test_a_damaged_tensorflow_file_names_the_record(tmp_path, records):
    path = tmp_path / "damaged.tfrecord"
    tf_write(path, records[:5], "")
    raw = bytearray(path.read_bytes())
    # The third record's data: past two whole records and its 12-byte header.
    offset = sum(len(r) + 16 for r in records[:2]) + 12
    raw[offset] ^= 0x40
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"damaged\.tfrecord.*record 2"):
        list(data.read_records(path))


SPEC = {
    "label": data.FixedLenFeature((), "int64"),
    "dense": data.FixedLenFeature((4,), "float32", default=0.5),
    "ids": data.VarLenFeature("int64"),
    "words": data.VarLenFeature("bytes"),
    "country": data.FixedLenFeature((), "bytes"),
}

TF_SPEC = {
    "label": tf.io.FixedLenFeature((), tf.int64),
    "dense": tf.io.FixedLenFeature((4,), tf.float32, default_value=[0.5] * 4),
    "ids": tf.io.VarLenFeature(tf.int64),
    "words": tf.io.VarLenFeature(tf.string),
    "country": tf.io.FixedLenFeature((), tf.string),
}


def ragged_of(sparse, batch):
    """A tf.SparseTensor from VarLenFeature as (values, row lengths)."""
    rows = sparse.indices.numpy()[:, 0]
    return sparse.values.numpy(), np.bincount(rows, minlength=batch)


def test_parse_example_equals_tensorflows(records):
    for start in range(0, len(records), 128):
        batch = records[start:start + 128]
        ours = data.parse_example(batch, SPEC)
        theirs = tf.io.parse_example(tf.constant(batch), TF_SPEC)
        np.testing.assert_array_equal(ours["label"], theirs["label"].numpy())
        np.testing.assert_array_equal(ours["dense"], theirs["dense"].numpy())
        assert list(ours["country"]) == list(theirs["country"].numpy())
        for name in ("ids", "words"):
            values, lengths = ours[name]
            tf_values, tf_lengths = ragged_of(theirs[name], len(batch))
            assert list(values) == list(tf_values), name
            np.testing.assert_array_equal(lengths, tf_lengths)


def test_a_missing_required_feature_fails_as_in_tensorflow(records):
    spec = dict(SPEC, dense=data.FixedLenFeature((4,), "float32"))
    with pytest.raises(ValueError, match="dense"):
        data.parse_example(records[:3], spec)
    tf_spec = dict(TF_SPEC, dense=tf.io.FixedLenFeature((4,), tf.float32))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.parse_example(tf.constant(records[:3]), tf_spec)


# The `tfrecord` package's example_pb2 and TensorFlow's declare the same
# messages, which one process's protobuf cannot hold both of: the package
# runs in a subprocess of its own.
TFRECORD_SCRIPT = r"""
import json, sys
import numpy as np
import tfrecord
if sys.argv[1] == "write":
    writer = tfrecord.TFRecordWriter(sys.argv[2])
    for i in range(50):
        writer.write({"x": (np.arange(i % 7, dtype=np.int64).tolist(), "int"),
                      "y": ([float(i), -float(i)], "float")})
    writer.close()
else:
    loader = tfrecord.reader.tfrecord_loader(sys.argv[2], None, {"label": "int"})
    print(json.dumps([int(np.asarray(r["label"]).reshape(-1)[0]) for r in loader]))
"""


def run_tfrecord_package(*args):
    import json
    import subprocess
    import sys
    probe = subprocess.run([sys.executable, "-c", "import tfrecord"],
                           capture_output=True)
    if probe.returncode:
        pytest.skip("the tfrecord package is not installed")
    done = subprocess.run([sys.executable, "-c", TFRECORD_SCRIPT, *args],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_the_tfrecord_package(tmp_path, records):
    path = tmp_path / "package.tfrecord"
    run_tfrecord_package("write", str(path))
    parsed = data.parse_example(list(data.read_records(path)),
                                {"x": data.VarLenFeature("int64"),
                                 "y": data.FixedLenFeature((2,), "float32")})
    values, lengths = parsed["x"]
    np.testing.assert_array_equal(lengths, [i % 7 for i in range(50)])
    np.testing.assert_array_equal(
        values, np.concatenate([np.arange(i % 7) for i in range(50)]))
    np.testing.assert_array_equal(parsed["y"][:, 0], np.arange(50))
    # And the package reads what kiln writes.
    ours = tmp_path / "kiln.tfrecord"
    data.write_records(ours, records[:20])
    got = run_tfrecord_package("read", str(ours))
    assert got == list(tf.io.parse_example(
        tf.constant(records[:20]), {"label": TF_SPEC["label"]})["label"].numpy())


def random_sequence_examples(count, seed):
    """tf.train.SequenceExamples: a context (a user id, ragged tags), a
    fixed-length list of 2 floats per step, one of an int64 per step
    (missing in some records), and a list of any number of strings per
    step."""
    rng = np.random.default_rng(seed)
    records = []
    for i in range(count):
        steps = int(rng.integers(0, 6))
        context = tf.train.Features(feature={
            "user": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[b"t%d" % t for t in range(rng.integers(0, 3))]))})
        lists = {
            "xy": tf.train.FeatureList(feature=[
                tf.train.Feature(float_list=tf.train.FloatList(
                    value=rng.standard_normal(2).astype(np.float32).tolist()))
                for _ in range(steps)]),
            "words": tf.train.FeatureList(feature=[
                tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[b"w%d" % rng.integers(0, 99)
                           for _ in range(rng.integers(0, 4))]))
                for _ in range(steps)]),
        }
        if i % 4:
            lists["clicks"] = tf.train.FeatureList(feature=[
                tf.train.Feature(int64_list=tf.train.Int64List(
                    value=[int(rng.integers(0, 1000))]))
                for _ in range(int(rng.integers(1, 4)))])
        records.append(tf.train.SequenceExample(
            context=context,
            feature_lists=tf.train.FeatureLists(feature_list=lists))
            .SerializeToString())
    return records


def test_parse_sequence_example_equals_tensorflows():
    records = random_sequence_examples(90, seed=3)
    context, lists, lengths = data.parse_sequence_example(
        records,
        {"user": data.FixedLenFeature((), "int64"),
         "tags": data.VarLenFeature("bytes")},
        {"xy": data.FixedLenSequenceFeature((2,), "float32"),
         "clicks": data.FixedLenSequenceFeature((), "int64", allow_missing=True,
                                                default=-1),
         "words": data.VarLenFeature("bytes")})
    tf_context, tf_lists, tf_lengths = tf.io.parse_sequence_example(
        tf.constant(records),
        context_features={"user": tf.io.FixedLenFeature((), tf.int64),
                          "tags": tf.io.VarLenFeature(tf.string)},
        sequence_features={
            "xy": tf.io.FixedLenSequenceFeature((2,), tf.float32),
            # TensorFlow's batched parse pads with zeros only.
            "clicks": tf.io.FixedLenSequenceFeature((), tf.int64,
                                                    allow_missing=True),
            "words": tf.io.VarLenFeature(tf.string)})
    np.testing.assert_array_equal(context["user"], tf_context["user"].numpy())
    tags, tag_counts = context["tags"]
    tf_tags, tf_tag_counts = ragged_of(tf_context["tags"], len(records))
    assert list(tags) == list(tf_tags)
    np.testing.assert_array_equal(tag_counts, tf_tag_counts)
    for name in ("xy", "clicks"):
        np.testing.assert_array_equal(lengths[name], tf_lengths[name].numpy())
    np.testing.assert_array_equal(lists["xy"], tf_lists["xy"].numpy())
    padded = tf_lists["clicks"].numpy()
    padded[np.arange(padded.shape[1])[None, :] >= lengths["clicks"][:, None]] = -1
    np.testing.assert_array_equal(lists["clicks"], padded)
    values, steps, counts = lists["words"]
    sparse = tf_lists["words"]
    assert list(values) == list(sparse.values.numpy())
    index = sparse.indices.numpy()
    # Steps per record: TensorFlow's dense shape pads to the longest, so
    # each record's steps are counted from the "xy" list of the same
    # records (every list has as many steps there).
    np.testing.assert_array_equal(steps, lengths["xy"])
    expected_counts = [int(np.sum((index[:, 0] == r) & (index[:, 1] == s)))
                       for r in range(len(records)) for s in range(steps[r])]
    np.testing.assert_array_equal(counts, expected_counts)


def test_a_missing_feature_list_is_named():
    records = random_sequence_examples(8, seed=5)
    with pytest.raises(ValueError, match=r"record 0: feature list 'clicks' is missing"):
        data.parse_sequence_example(
            records, None, {"clicks": data.FixedLenSequenceFeature((), "int64")})
    with pytest.raises(ValueError, match=r"feature list 'xy', step 0 holds float"):
        data.parse_sequence_example(
            records[1:], None, {"xy": data.FixedLenSequenceFeature((2,), "int64")})


def random_words(rng, count):
    return [bytes(rng.integers(32, 127, rng.integers(0, 12)).astype(np.uint8))
            for _ in range(count)] + ["café".encode(), "日本".encode()]


def test_hash_buckets_are_tensorflows():
    rng = np.random.default_rng(11)
    words = random_words(rng, 500)
    for buckets in (1, 7, 1000, 2**40):
        np.testing.assert_array_equal(
            data.hash_bucket(words, buckets),
            tf.strings.to_hash_bucket_fast(words, buckets).numpy())
    ints = rng.integers(-2**62, 2**62, 300)
    np.testing.assert_array_equal(data.hash_bucket(ints, 1009),
                                  tf.keras.layers.Hashing(1009)(ints).numpy())
    np.testing.assert_array_equal(
        data.fingerprint64(words),
        tf.bitcast(tf.fingerprint(tf.constant(words)), tf.uint64).numpy().ravel())


def test_vocabularies_are_tensorflows(tmp_path):
    rng = np.random.default_rng(12)
    vocabulary = sorted(set(random_words(rng, 200)))
    queries = random_words(rng, 100) + vocabulary[::3]
    for oov in (0, 1, 9):
        ours = data.Vocabulary(vocabulary, num_oov_buckets=oov, default_value=-7)
        if oov:
            table = tf.lookup.StaticVocabularyTable(
                tf.lookup.KeyValueTensorInitializer(
                    vocabulary, tf.range(len(vocabulary), dtype=tf.int64)), oov)
        else:
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    vocabulary, tf.range(len(vocabulary), dtype=tf.int64)), -7)
        np.testing.assert_array_equal(ours.lookup(queries),
                                      table.lookup(tf.constant(queries)).numpy())
        assert ours.id_count == len(vocabulary) + oov
    path = tmp_path / "vocabulary.txt"
    # TensorFlow refuses empty lines, as kiln does.
    lines = [w for w in vocabulary if w and b"\n" not in w and b"\r" not in w]
    path.write_bytes(b"\n".join(lines) + b"\n")
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.TextFileInitializer(
            str(path), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
            tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), 3)
    np.testing.assert_array_equal(
        data.Vocabulary(file=path, num_oov_buckets=3).lookup(queries),
        table.lookup(tf.constant(queries)).numpy())
    path.write_bytes(b"a\n\nb\n")
    with pytest.raises(ValueError, match="line 2 of the vocabulary file is empty"):
        data.Vocabulary(file=path)


def test_crosses_are_tensorflows():
    rng = np.random.default_rng(13)
    batch = 40
    words = [[b"w%d" % rng.integers(0, 30) for _ in range(rng.integers(0, 4))]
             for _ in range(batch)]
    ids = [rng.integers(-2**40, 2**40, rng.integers(1, 3)).tolist()
           for _ in range(batch)]
    dense = rng.integers(0, 5, (batch, 2))
    ragged_words = (sum(words, []), [len(w) for w in words])
    ragged_ids = (np.array(sum(ids, []), dtype=np.int64), [len(i) for i in ids])
    inputs = [tf.ragged.constant(words, dtype=tf.string).to_sparse(),
              tf.ragged.constant(ids, dtype=tf.int64).to_sparse(),
              tf.constant(dense, dtype=tf.int64)]
    for buckets, key in ((0, data.DEFAULT_CROSS_HASH_KEY), (1000, 7)):
        crossed = tf.sparse.cross_hashed(inputs, num_buckets=buckets,
                                         hash_key=key)
        values, lengths = data.cross_hashed([ragged_words, ragged_ids, dense],
                                            buckets, key)
        np.testing.assert_array_equal(values, crossed.values.numpy())
        np.testing.assert_array_equal(
            lengths, np.bincount(crossed.indices.numpy()[:, 0], minlength=batch))
