"""kiln_runtime.data against independent producers: TFRecord files framed
here with a CRC32C written in Python, compressed by Python's gzip and zlib
modules, holding tf.Example records serialized by Python's protobuf from
classes protoc generates from kiln's example.proto. The arrays come from the
extension, so the file runs under numpy 2 as well (pybind11's one-argument
array_t constructor filled a row-length array wrongly there).
"""
# kiln: also under the reference interpreter's numpy

import gzip
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from kiln_runtime import data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(ROOT, "runtime", "lib", "data")


sys.path.insert(0, os.path.join(ROOT, "runtime", "fuzz"))
# The fuzzers' seed writer frames records with a CRC32C of its own, in
# Python: the independent framing these tests read.
from write_tfrecord_seeds import frame  # noqa: E402


@pytest.fixture(scope="module")
def example_pb2(tmp_path_factory):
    """example.proto's Python classes, made by protoc for this interpreter's
    protobuf."""
    pytest.importorskip("google.protobuf")
    out = tmp_path_factory.mktemp("proto")
    try:
        subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", f"--python_out={out}",
                        os.path.join(PROTO_DIR, "example.proto")], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"protoc cannot write Python classes here: {exc}")
    sys.path.insert(0, str(out))
    try:
        import example_pb2 as module
    except Exception as exc:  # noqa: BLE001 - a protoc/protobuf mismatch
        pytest.skip(f"protoc's classes do not load with this protobuf: {exc}")
    finally:
        sys.path.remove(str(out))
    return module


def make_example(pb, **features):
    example = pb.Example()
    for name, value in features.items():
        feature = example.features.feature[name]
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            feature.bytes_list.value.extend(value)
        elif isinstance(value, list) and value and isinstance(value[0], float):
            feature.float_list.value.extend(value)
        else:
            feature.int64_list.value.extend(value)
    return example.SerializeToString()


def test_records_framed_and_compressed_elsewhere_are_read(tmp_path):
    records = [b"", b"a", bytes(range(256)) * 9, b"last"]
    framed = b"".join(frame(r) for r in records)
    (tmp_path / "plain.tfrecord").write_bytes(framed)
    (tmp_path / "records.tfrecord.gz").write_bytes(gzip.compress(framed))
    (tmp_path / "records.zlib").write_bytes(zlib.compress(framed))
    for name in ("plain.tfrecord", "records.tfrecord.gz", "records.zlib"):
        assert list(data.read_records(tmp_path / name)) == records, name
    # Several files, in order; and the writer writes what the framing says.
    files = [tmp_path / "plain.tfrecord", tmp_path / "records.zlib"]
    assert list(data.read_records(files)) == records + records
    data.write_records(tmp_path / "ours.tfrecord", records)
    assert (tmp_path / "ours.tfrecord").read_bytes() == framed
    data.write_records(tmp_path / "ours.tfrecord.gz", records)
    assert gzip.decompress((tmp_path / "ours.tfrecord.gz").read_bytes()) == framed


def test_damage_is_a_clear_error(tmp_path):
    framed = bytearray(frame(b"first") + frame(b"second"))
    framed[len(frame(b"first")) + 14] ^= 1
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(framed))
    reader = data.read_records(path)
    assert next(reader) == b"first"
    with pytest.raises(ValueError, match=r"damaged.tfrecord: record 1 at byte 21: "
                       r"the data's CRC does not match"):
        next(reader)
    with pytest.raises(OSError, match="cannot open"):
        list(data.read_records(tmp_path / "missing.tfrecord"))
    with pytest.raises(ValueError, match="unknown compression 'lz4'"):
        list(data.read_records(path, compression="lz4"))


def test_dataset_skips_and_counts_bad_records(tmp_path, example_pb2):
    # Labels 0..9; record 3's data damaged, record 6 a float label, record 8
    # not an Example at all.
    records = [make_example(example_pb2, label=[i]) for i in range(10)]
    records[6] = make_example(example_pb2, label=[6.0])
    records[8] = b"\xff\xff\xff"
    framed = bytearray(b"".join(frame(r) for r in records))
    framed[sum(len(frame(r)) for r in records[:3]) + 12] ^= 1
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(framed))
    spec = {"label": data.FixedLenFeature((), np.int64)}
    with pytest.raises(ValueError, match=r"bad.tfrecord: record 3 at byte \d+: "
                       "the data's CRC does not match"):
        list(data.Dataset(path, 4, spec=spec))
    dataset = data.Dataset(path, 4, spec=spec, skip_bad_records=True)
    labels = [list(b["label"]) for b in dataset]
    # The damaged record never reaches a batch; those that do not parse
    # leave their batch short.
    assert labels == [[0, 1, 2, 4], [5, 7], [9]]
    assert dataset.skipped == 3
    assert "is not a serialized tf.Example" in dataset.last_skipped
    # Without a spec only the damaged record goes; a second epoch counts on.
    raw = data.Dataset(path, 4, skip_bad_records=True)
    assert sum(len(b) for b in raw) == 9
    assert raw.skipped == 1 and "the data's CRC" in raw.last_skipped
    assert sum(len(b) for b in raw) == 9 and raw.skipped == 2
    # Batches left short are dropped with drop_remainder.
    dropped = data.Dataset(path, 4, spec=spec, skip_bad_records=True,
                           drop_remainder=True)
    assert [list(b["label"]) for b in dropped] == [[0, 1, 2, 4]]


def test_examples_parse_into_arrays(tmp_path, example_pb2):
    records = [make_example(example_pb2, label=[1], dense=[0.5, -2.0],
                            word=[b"cat"], ids=[7, 8, 9]),
               make_example(example_pb2, label=[0], word=[b"dog"]),
               make_example(example_pb2, label=[1], dense=[1.5, 3.0],
                            word=[b""], ids=[2**40])]
    path = tmp_path / "examples.tfrecord.gz"
    data.write_records(path, records)
    spec = {"label": data.FixedLenFeature((), np.int64),
            "dense": data.FixedLenFeature((2,), np.float32, default=0.25),
            "word": data.FixedLenFeature((), "bytes"),
            "ids": data.VarLenFeature(np.int64)}
    (batch,) = list(data.batches(data.read_records(path), 8))
    out = data.parse_example(batch, spec)
    np.testing.assert_array_equal(out["label"], np.int64([1, 0, 1]))
    assert out["label"].dtype == np.int64
    np.testing.assert_array_equal(out["dense"],
                                  np.float32([[0.5, -2], [0.25, 0.25], [1.5, 3]]))
    assert out["dense"].dtype == np.float32
    assert list(out["word"]) == [b"cat", b"dog", b""]
    values, lengths = out["ids"]
    np.testing.assert_array_equal(values, np.int64([7, 8, 9, 2**40]))
    np.testing.assert_array_equal(lengths, np.int64([3, 0, 1]))


def test_example_mistakes_name_the_record_and_feature(example_pb2):
    spec = {"label": data.FixedLenFeature((), np.int64)}
    good = make_example(example_pb2, label=[1])
    with pytest.raises(ValueError, match="record 1: feature 'label' holds float "
                       "values, the spec says int64"):
        data.parse_example([good, make_example(example_pb2, label=[1.0])], spec)
    with pytest.raises(ValueError, match="record 0: feature 'label' is missing"):
        data.parse_example([make_example(example_pb2, other=[3])], spec)
    with pytest.raises(ValueError, match="record 0 is not a serialized tf.Example"):
        data.parse_example([b"\xff\xff\xff"], spec)
    with pytest.raises(ValueError, match="2 default values for a shape of 3"):
        data.parse_example([good], {"x": data.FixedLenFeature((3,), "int64",
                                                              default=[1, 2])})
    with pytest.raises(ValueError, match="int64, float32 or bytes"):
        data.FixedLenFeature((), np.float16)


def test_dataset_shards_shuffles_and_parses(tmp_path, example_pb2):
    files = [tmp_path / "a.tfrecord.gz", tmp_path / "b.tfrecord"]
    data.write_records(files[0], [make_example(example_pb2, n=[i]) for i in range(30)])
    data.write_records(files[1], [make_example(example_pb2, n=[i]) for i in range(30, 50)])
    spec = {"n": data.FixedLenFeature((), "int64")}

    def numbers(**kwargs):
        return [int(v) for batch in data.Dataset(files, 8, spec=spec, **kwargs)
                for v in batch["n"]]

    assert numbers() == list(range(50))
    assert numbers(prefetch=0) == list(range(50))
    shards = [numbers(rank=r, ranks=3) for r in range(3)]
    assert [sorted(s) for s in shards] == [list(range(r, 50, 3)) for r in range(3)]
    shuffled = numbers(shuffle_buffer=100, seed=5)
    assert sorted(shuffled) == list(range(50)) and shuffled != list(range(50))
    assert numbers(shuffle_buffer=100, seed=5) == shuffled
    assert numbers(shuffle_buffer=100, seed=6) != shuffled
    batches = list(data.Dataset(files, 8, drop_remainder=True))
    assert [len(b) for b in batches] == [8] * 6
    # Each iteration is an epoch: the first runs on the dataset made when the
    # options were checked, the second on a fresh one, in the same order.
    dataset = data.Dataset(files, 8, shuffle_buffer=100, seed=5, spec=spec)
    first = [list(b["n"]) for b in dataset]
    assert [list(b["n"]) for b in dataset] == first
    assert sum(first, []) == shuffled
    with pytest.raises(ValueError, match="rank 3 is not one of 2 ranks"):
        data.Dataset(files, 8, rank=3, ranks=2)


def test_criteo_logs(tmp_path):
    # Lines of the Criteo format written here, with missing fields.
    rng = np.random.default_rng(4)
    rows = []
    for i in range(7):
        dense = [str(int(v)) if v >= 0 else "" for v in rng.integers(-3, 500, 13)]
        sparse = [f"{int(v):08x}" if v >= 0 else "" for v in
                  rng.integers(-2**30, 2**32, 26)]
        rows.append((i % 2, dense, sparse))
    text = "".join("\t".join([str(label)] + dense + sparse) + "\n"
                   for label, dense, sparse in rows)
    (tmp_path / "day_0").write_text(text)
    batches = list(data.read_criteo(tmp_path / "day_0", 4))
    assert [len(b["label"]) for b in batches] == [4, 3]
    labels = np.concatenate([b["label"] for b in batches])
    dense = np.concatenate([b["dense"] for b in batches])
    sparse = np.concatenate([b["sparse"] for b in batches])
    np.testing.assert_array_equal(labels, [r[0] for r in rows])
    np.testing.assert_array_equal(
        dense, [[int(v) if v else 0 for v in r[1]] for r in rows])
    np.testing.assert_array_equal(
        sparse, [[int(v, 16) if v else -1 for v in r[2]] for r in rows])
    (tmp_path / "bad").write_text(text + "1\t2\n")
    with pytest.raises(ValueError, match=r"bad: line 8: 2 fields, not 40"):
        list(data.read_criteo(tmp_path / "bad", 100))


def test_criteo_shards_are_disjoint_and_complete_across_files(tmp_path):
    # Two files of 5 and 6 lines (a blank line between, not counted):
    # example i of the pair goes to rank i % ranks.
    lines = ["\t".join([str(i % 2)] + [str(i)] * 13 + [f"{i:x}"] * 26)
             for i in range(11)]
    (tmp_path / "day_0").write_text("\n".join(lines[:5]) + "\n")
    (tmp_path / "day_1").write_text("\n".join(lines[5:8]) + "\n\n" +
                                    "\n".join(lines[8:]) + "\n")
    files = [tmp_path / "day_0", tmp_path / "day_1"]
    for ranks in (1, 2, 3, 4):
        seen = []
        for rank in range(ranks):
            got = np.concatenate([b["dense"][:, 0] for b in
                                  data.read_criteo(files, 2, rank, ranks)])
            np.testing.assert_array_equal(got, np.arange(rank, 11, ranks))
            seen += list(got)
        assert sorted(seen) == list(range(11))
    # A malformed line is the error of the rank that owns it.
    (tmp_path / "bad").write_text("\n".join(lines[:3] + ["1\t2"]) + "\n")
    assert len(list(data.read_criteo(tmp_path / "bad", 8, 0, 2))) == 1
    with pytest.raises(ValueError, match=r"bad: line 4: 2 fields, not 40"):
        list(data.read_criteo(tmp_path / "bad", 8, 1, 2))
    with pytest.raises(ValueError, match="rank 2 is not one of 2 ranks"):
        list(data.read_criteo(files, 8, 2, 2))


def test_criteo_batches_parsed_ahead_are_the_same(tmp_path):
    lines = ["\t".join([str(i % 2)] + [str(i)] * 13 + [f"{i:x}"] * 26)
             for i in range(23)]
    (tmp_path / "day_0").write_text("\n".join(lines[:10]) + "\n")
    (tmp_path / "day_1").write_text("\n".join(lines[10:]) + "\n1\t2\n")
    files = [tmp_path / "day_0", tmp_path / "day_1"]
    runs = []
    for prefetch in (0, 1, 4):
        got = []
        with pytest.raises(ValueError, match=r"day_1: line 14: 2 fields"):
            for batch in data.read_criteo(files, 4, prefetch=prefetch):
                got.append(batch["dense"][:, 0].tolist())
        runs.append(got)
    assert runs[0] == runs[1] == runs[2]
    # A file's last batch is shorter; the batch holding the bad line is
    # the error.
    assert runs[0] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9], [10, 11, 12, 13],
                       [14, 15, 16, 17], [18, 19, 20, 21]]
    # A file that cannot be opened is an OSError before the first batch.
    with pytest.raises(OSError, match="missing"):
        data.read_criteo([files[0], tmp_path / "missing"], 4)


def test_batches():
    assert list(data.batches(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(data.batches(range(7), 3, drop_remainder=True)) == [[0, 1, 2],
                                                                     [3, 4, 5]]


def test_categorical_ids_are_tensorflows():
    # Printed by TensorFlow 2.21 for the same inputs (to_hash_bucket_fast,
    # keras.layers.Hashing, sparse.cross_hashed); test_data_tensorflow.py
    # compares with TensorFlow itself on random inputs.
    np.testing.assert_array_equal(
        data.hash_bucket([b"hello", "", b"kiln"], 1000), [296, 263, 327])
    np.testing.assert_array_equal(
        data.hash_bucket(np.array([[0, -5, 12345678901234]]), 1000), [[735, 816, 794]])
    assert data.fingerprint64([b"hello"])[0] == 13009744463427800296
    ids, lengths = data.cross_hashed([np.array([[b"a"]], dtype=object),
                                      np.array([[7]])], 100, 12345)
    np.testing.assert_array_equal(ids, [80])
    np.testing.assert_array_equal(lengths, [1])
    # Row lengths that would read outside the values are refused.
    with pytest.raises(ValueError, match="negative row length"):
        data.cross_hashed([(np.array([1, 2]), [-1, 3]), (np.array([5, 6]), [1, 1])])
    vocabulary = data.Vocabulary(["red", "green"], num_oov_buckets=5)
    np.testing.assert_array_equal(vocabulary.lookup(["green", "hello"]),
                                  [1, 2 + 13009744463427800296 % 5])
    with pytest.raises(ValueError, match="repeats 'red'"):
        data.Vocabulary(["red", "red"])
    with pytest.raises(OSError, match="cannot open the vocabulary file"):
        data.Vocabulary(file="/nonexistent/vocabulary.txt")
