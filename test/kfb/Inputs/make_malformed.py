#!/usr/bin/env python3
"""Writes the malformed .kfb files of test/kfb/malformed.test.

Usage: make_malformed.py SCHEMA VALID_KFB OUT_DIR

Two kinds of cases:

* byte edits of VALID_KFB (a file written by kiln-translate from
  Inputs/small.mlir): truncations, a wrong identifier, bit flips in the part
  the FlatBuffers verifier protects, and a constant buffer of the wrong size;
* models written as JSON and turned into .kfb files by flatc, each a small
  valid model with one thing wrong: the readable way to build files whose
  structure is fine but whose meaning is not.
"""

import copy
import json
import os
import shutil
import struct
import subprocess
import sys


def write(out_dir, name, data):
    with open(os.path.join(out_dir, name + ".kfb"), "wb") as f:
        f.write(data)


def byte_edits(valid, out_dir):
    write(out_dir, "truncated-header", valid[:6])
    write(out_dir, "truncated-half", valid[: len(valid) // 2])
    write(out_dir, "wrong-identifier", valid[:4] + b"KMOD" + valid[8:])

    # The root offset (bytes 0-3, little-endian) with bit 30 set points far
    # past the end of the file.
    flipped = bytearray(valid)
    flipped[3] ^= 0x40
    write(out_dir, "bitflip-root-offset", bytes(flipped))

    # The constant's data: four f32s, preceded by the vector's length (16).
    data = struct.pack("<4f", 1.0, 2.0, 3.0, 4.0)
    at = valid.find(data)
    if at < 4 or valid.find(data, at + 1) != -1:
        sys.exit("make_malformed.py: cannot find the constant's buffer")
    (length,) = struct.unpack_from("<I", valid, at - 4)
    if length != 16:
        sys.exit("make_malformed.py: unexpected buffer length %d" % length)

    # A length reaching past the end of the file: the verifier's business.
    flipped = bytearray(valid)
    flipped[at - 1] ^= 0x40
    write(out_dir, "bitflip-vector-length", bytes(flipped))

    # A length that is plausible but wrong for tensor<4xf32>: the verifier
    # accepts it, the semantic checks must not.
    shortened = bytearray(valid)
    struct.pack_into("<I", shortened, at - 4, 12)
    write(out_dir, "constant-size", bytes(shortened))


def tensor(dtype, *shape):
    return {"dtype": dtype, "shape": list(shape)}


F32X4 = tensor("F32", 4)
I64 = tensor("I64")


def named(name, kind, value):
    return {"name": name, "value_type": kind, "value": value}


def base_model():
    """f(x, y) = x + y on tensor<4xf32>: valid as it stands."""
    return {
        "version": {"major": 1, "minor": 0},
        "functions": [
            {
                "name": "f",
                "inputs": [
                    {"name": "x", "type": F32X4},
                    {"name": "y", "type": F32X4},
                ],
                "outputs": [{"type": F32X4}],
                "body": {
                    "blocks": [
                        {
                            "argument_types": [F32X4, F32X4],
                            "operations": [
                                {
                                    "name": "kiln.add",
                                    "operands": [0, 1],
                                    "result_types": [F32X4],
                                },
                                {"name": "func.return", "operands": [2]},
                            ],
                        }
                    ]
                },
            }
        ],
    }


def ops(model):
    return model["functions"][0]["body"]["blocks"][0]["operations"]


def for_loop(inits, body_ops, trip_count=3):
    """A kiln.for over tensor<4xf32> values; body args are %i then inits."""
    return {
        "name": "kiln.for",
        "operands": inits,
        "result_types": [F32X4] * len(inits),
        "attributes": [
            named(
                "trip_count",
                "IntegerAttr",
                {"type": "I64", "value": trip_count},
            )
        ],
        "regions": [
            {
                "blocks": [
                    {
                        "argument_types": [I64] + [F32X4] * len(inits),
                        "operations": body_ops,
                    }
                ]
            }
        ],
    }


def json_cases():
    cases = {}

    def case(name):
        def register(edit):
            model = base_model()
            edit(model)
            cases[name] = model
            return edit

        return register

    @case("valid")
    def _(m):
        pass

    @case("newer-minor-version")
    def _(m):
        m["version"]["minor"] = 9

    @case("newer-major-version")
    def _(m):
        m["version"] = {"major": 2, "minor": 0}

    @case("no-version")
    def _(m):
        del m["version"]

    @case("unknown-op")
    def _(m):
        ops(m)[0]["name"] = "kiln.frobnicate"

    @case("foreign-op")
    def _(m):
        ops(m)[0]["name"] = "arith.addf"

    @case("operand-arity")
    def _(m):
        ops(m)[0]["operands"] = [0, 1, 1]

    @case("result-arity")
    def _(m):
        ops(m)[0]["result_types"] = []

    @case("region-arity")
    def _(m):
        loop = for_loop([0], [])
        del loop["regions"]
        ops(m).insert(0, loop)

    @case("dangling-forward")
    def _(m):
        ops(m)[0]["operands"] = [0, 7]

    @case("dangling-self")
    def _(m):
        ops(m)[0]["operands"] = [0, 2]

    @case("dangling-scope")
    def _(m):
        # %2 is the loop's result, %3 and %4 its body's arguments, %5 the
        # tanh inside the body: not visible after the loop.
        body = [
            {"name": "kiln.tanh", "operands": [4], "result_types": [F32X4]},
            {"name": "kiln.yield", "operands": [5]},
        ]
        ops(m)[:] = [
            for_loop([0], body),
            {"name": "func.return", "operands": [5]},
        ]

    @case("nested-unknown-op")
    def _(m):
        body = [
            {"name": "kiln.tanh", "operands": [4], "result_types": [F32X4]},
            {"name": "kiln.bogus", "operands": [5], "result_types": [F32X4]},
            {"name": "kiln.yield", "operands": [6]},
        ]
        ops(m)[:] = [
            for_loop([0], body),
            {"name": "func.return", "operands": [2]},
        ]

    @case("bad-dtype-input")
    def _(m):
        m["functions"][0]["inputs"][0]["type"] = tensor(13, 4)

    @case("bad-dtype-result")
    def _(m):
        ops(m)[0]["result_types"] = [tensor(200, 4)]

    @case("negative-dimension")
    def _(m):
        ops(m)[0]["result_types"] = [tensor("F32", -1)]

    @case("wrong-attribute-kind")
    def _(m):
        ops(m)[0] = {
            "name": "kiln.transpose",
            "operands": [0],
            "result_types": [F32X4],
            "attributes": [
                named("permutation", "IntegerAttr", {"type": "I64", "value": 0})
            ],
        }

    @case("bad-compare-direction")
    def _(m):
        ops(m)[0] = {
            "name": "kiln.compare",
            "operands": [0, 1],
            "result_types": [tensor("I1", 4)],
            "attributes": [
                named("direction", "IntegerAttr", {"type": "I32", "value": 9})
            ],
        }

    @case("integer-out-of-range")
    def _(m):
        ops(m)[0]["attributes"] = [
            named("kiln.big", "IntegerAttr", {"type": "I32", "value": 1 << 40})
        ]

    @case("duplicate-attribute")
    def _(m):
        ops(m)[0]["attributes"] = [
            named("kiln.tag", "UnitAttr", {}),
            named("kiln.tag", "StringAttr", {"value": "again"}),
        ]

    @case("buffer-out-of-range")
    def _(m):
        ops(m)[0] = {
            "name": "kiln.constant",
            "result_types": [F32X4],
            "attributes": [
                named(
                    "value",
                    "DenseElementsAttr",
                    {"type": F32X4, "buffer": 3},
                )
            ],
        }

    @case("duplicate-function")
    def _(m):
        m["functions"].append(copy.deepcopy(m["functions"][0]))

    @case("type-mismatch")
    def _(m):
        # Well-formed, but kiln.add's operands differ in type: the MLIR
        # verifier's finding, reported by the op's place in the file.
        f64x4 = tensor("F64", 4)
        m["functions"][0]["inputs"][1]["type"] = f64x4
        m["functions"][0]["body"]["blocks"][0]["argument_types"][1] = f64x4

    return cases


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    schema, valid_path, out_dir = sys.argv[1:]
    with open(valid_path, "rb") as f:
        valid = f.read()
    byte_edits(valid, out_dir)

    flatc = shutil.which("flatc")
    if not flatc:
        sys.exit("make_malformed.py: flatc is not on PATH")
    json_dir = os.path.join(out_dir, "json")
    os.makedirs(json_dir, exist_ok=True)
    paths = []
    for name, model in json_cases().items():
        path = os.path.join(json_dir, name + ".json")
        with open(path, "w") as f:
            json.dump(model, f, indent=1)
        paths.append(path)
    subprocess.run([flatc, "-b", "-o", out_dir, schema] + paths, check=True)


if __name__ == "__main__":
    main()
