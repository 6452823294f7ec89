#!/usr/bin/env python3
"""Writes the .npy fuzzer's seeds (seeds/npy) with numpy, the format's own
implementation: every element type kiln reads, ranks 0 to 4, an empty
array, untyped 2-byte elements (numpy's bfloat16 files), format versions
1.0, 2.0 and 3.0, and arrays the reader must refuse
with a message (Fortran order, big-endian data, a type kiln has no row for).

    /usr/bin/python3 runtime/fuzz/write_npy_seeds.py runtime/fuzz/seeds/npy
"""

import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    arrays = {
        "f32_rank0": np.float32(1.5),
        "f64_2x3": rng.standard_normal((2, 3)),
        "bool_5": rng.random(5) > 0.5,
        "i32_0x3": np.zeros((0, 3), np.int32),
        "i64_1x1x1x7": np.arange(7, dtype=np.int64).reshape(1, 1, 1, 7),
        "f16_3": np.array([0.5, -2.0, 65504.0], np.float16),
        "i8_4": np.array([-128, -1, 0, 127], np.int8),
        "i16_2x2": np.array([[-32768, 1], [2, 32767]], np.int16),
        "u8_6": np.arange(250, 256, dtype=np.uint8),
        "u16_3": np.array([0, 1, 65535], np.uint16),
        "u32_2": np.array([0, 4294967295], np.uint32),
        "u64_2": np.array([0, 18446744073709551615], np.uint64),
        "f32_2x3x4": rng.standard_normal((2, 3, 4)).astype(np.float32),
    }
    for name, array in arrays.items():
        np.save(os.path.join(out, name + ".npy"), array)
    # numpy saves a dtype it does not define (ml_dtypes.bfloat16) as untyped
    # bytes; kiln-run reads them for a bf16 input: 0.5, -2, 1/3 in bf16.
    bf16 = np.array([0x3F00, 0xC000, 0x3EAB], "<u2").view("V2")
    np.save(os.path.join(out, "untyped_bf16_3.npy"), bf16)
    refused = {
        "fortran_order": np.asfortranarray(rng.standard_normal((3, 2))),
        "big_endian": np.arange(4, dtype=">f4"),
        "complex": np.array([1 + 2j], np.complex64),
    }
    for name, array in refused.items():
        np.save(os.path.join(out, "refused_" + name + ".npy"), array)
    for version in ((2, 0), (3, 0)):
        path = os.path.join(out, "f32_version%d.npy" % version[0])
        with open(path, "wb") as file:
            np.lib.format.write_array(file, np.ones((2, 2), np.float32),
                                      version=version)


if __name__ == "__main__":
    main()
