#!/usr/bin/env python3
"""Writes the seeds of kiln-fuzz-tfrecord: small TFRecord files (one
record, several, an empty one, a truncated and a damaged one), framed with
a bitwise CRC32C written here independently of the reader.

    python3 runtime/fuzz/write_tfrecord_seeds.py runtime/fuzz/seeds/tfrecord
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


def main(out):
    os.makedirs(out, exist_ok=True)
    example = bytes.fromhex("0a0f0a0d0a056c6162656c12041a020801")  # a tf.Example
    seeds = {
        "one.tfrecord": frame(b"hello"),
        "several.tfrecord": frame(b"") + frame(example) + frame(bytes(range(256))),
        "truncated.tfrecord": frame(b"abcdef")[:-3],
        "damaged.tfrecord": frame(b"abc")[:13] + b"x" + frame(b"abc")[14:],
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "tfrecord"))
