#!/usr/bin/env python3
"""Writes the seeds of kiln-fuzz-tfrecord (small TFRecord files: one
record, several, a truncated and a damaged one, framed with a bitwise
CRC32C written here independently of the reader) and of kiln-fuzz-example
(tf.Example records encoded here by hand from the wire format, several
per seed separated by "\n--\n").

    python3 runtime/fuzz/write_tfrecord_seeds.py runtime/fuzz/seeds
"""
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(record):
    length = struct.pack("<Q", len(record))
    return (length + struct.pack("<I", masked(crc32c(length))) + record +
            struct.pack("<I", masked(crc32c(record))))


def varint(n):
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def field(number, payload):
    """A length-delimited field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def feature(name, kind, values):
    """A map entry of Features: kind 1 bytes, 2 float, 3 int64 (packed)."""
    if kind == 1:
        lst = b"".join(field(1, v) for v in values)
    elif kind == 2:
        lst = field(1, b"".join(struct.pack("<f", v) for v in values))
    else:
        lst = field(1, b"".join(varint(v & (2**64 - 1)) for v in values))
    return field(1, field(1, name.encode()) + field(2, field(kind, lst)))


def example(*features):
    return field(1, b"".join(features))


def sequence_example(context, lists):
    """A SequenceExample: `context` is Features' entries, `lists` maps a
    name to its steps (each a Feature message's bytes)."""
    entries = b"".join(
        field(1, field(1, name.encode()) + field(2, b"".join(field(1, s) for s in steps)))
        for name, steps in lists.items())
    return field(1, b"".join(context)) + field(2, entries)


def step(kind, values):
    """One Feature message of a feature list (kind as in `feature`)."""
    entry = feature("", kind, values)
    # feature() wraps the Feature in a map entry; unwrap its value field.
    return entry[entry.index(b"\x12", 2) + 2:]


def main(out):
    tfrecords = os.path.join(out, "tfrecord")
    examples = os.path.join(out, "example")
    os.makedirs(tfrecords, exist_ok=True)
    os.makedirs(examples, exist_ok=True)
    full = example(feature("label", 3, [1]), feature("dense", 2, [0.5, -1, 2]),
                   feature("word", 1, [b"cat"]), feature("ids", 3, [7, -8, 2**40]),
                   feature("weights", 2, [0.25]))
    sparse = example(feature("label", 3, [0]))
    wrong = example(feature("label", 2, [1.0]))
    sequence = sequence_example(
        [feature("user", 3, [42])],
        {"clicks": [step(3, [1, 2]), step(3, [3])],
         "scores": [step(2, [0.5]), step(2, [-1.0])]})
    # Unknown fields of every wire type, a group among them, around a
    # feature: protobuf skips them, and so must the decoder.
    unknown = (varint(9 << 3 | 0) + varint(300) + varint(10 << 3 | 1) + bytes(8) +
               varint(11 << 3 | 3) + varint(12 << 3 | 5) + bytes(4) +
               varint(11 << 3 | 4) + full)
    for name, data in {"full.example": full,
                       "batch.example": full + b"\n--\n" + sparse,
                       "wrong-type.example": wrong,
                       "sequence.example": sequence,
                       "unknown-fields.example": unknown}.items():
        with open(os.path.join(examples, name), "wb") as f:
            f.write(data)
    out = tfrecords
    example_record = bytes.fromhex("0a0f0a0d0a056c6162656c12041a020801")
    seeds = {
        "one.tfrecord": frame(b"hello"),
        "several.tfrecord": frame(b"") + frame(example_record) + frame(bytes(range(256))),
        "truncated.tfrecord": frame(b"abcdef")[:-3],
        "damaged.tfrecord": frame(b"abc")[:13] + b"x" + frame(b"abc")[14:],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds"))
