"""Integer and bitwise ONNX operators against numpy, on the values where
they go wrong: ReduceMin and ReduceMax over signed and unsigned integers
holding their type's extremes and 0 (min(x) = -max(-x) is wrong for the
most negative value and for unsigned 0) and over bools (opset 20); BitShift
on signed types with negative and oversized amounts (opset 28); BitwiseAnd,
Or, Xor and Not (opset 18); Mod with fmod=0 on floats (opset 28), signed
zeros and infinities included; CumProd (opset 26) exclusive and reversed;
TopK over whole rows holding the extremes of int8; QuantizeLinear to int8
by output_dtype and to int16; TensorScatter wrapping around a cache;
LpNormalization with a zero vector. Each is a
one-node model written with Debian's onnx package, run through kiln-compile
and kiln-run. Runs without the benchmark virtualenv.

    check_integer_ops.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261126)

ELEM = {np.dtype(t): e for t, e in (
    (np.int8, TensorProto.INT8), (np.uint8, TensorProto.UINT8),
    (np.int16, TensorProto.INT16), (np.uint16, TensorProto.UINT16),
    (np.int32, TensorProto.INT32), (np.uint32, TensorProto.UINT32),
    (np.int64, TensorProto.INT64), (np.uint64, TensorProto.UINT64),
    (bool, TensorProto.BOOL), (np.float32, TensorProto.FLOAT))}


def extremes(dtype, shape):
    """Random values of `dtype` with its minimum, maximum and 0 planted."""
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 6, replace=False)] = [info.min, info.max, 0,
                                                     info.min, 0, info.max]
    return x


def run(name, node, inputs, want, opset, tolerance=None, bind=None):
    """Compiles and runs the one-node model; exact comparison unless a
    tolerance is given. `bind` maps input indices to --bind-input values."""
    bind = bind or {}
    names = [f"x{i}" for i in range(len(inputs))]
    node.input[:] = names
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, ELEM[v.dtype], v.shape) for n, v in zip(names, inputs)],
        [helper.make_tensor_value_info("y", ELEM[want.dtype], want.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    got = model_files.compile_and_run(
        bin_dir, work, name, path, [v for i, v in enumerate(inputs) if i not in bind],
        bind=[f"x{i}={v}" for i, v in bind.items()])
    if tolerance is not None:
        good = got.shape == want.shape and bool(np.all(np.abs(got - want) <= tolerance))
    elif want.dtype.kind == "f":
        # Equal as floats, NaN to NaN, and a zero's sign kept.
        good = got.shape == want.shape and np.array_equal(got, want, equal_nan=True) and \
            np.array_equal(np.signbit(got), np.signbit(want))
    else:
        good = got.shape == want.shape and np.array_equal(got, want)
    print(f"{name}: {'ok' if good else 'DIFFERS'}")
    if not good:
        print(f"  got  {got.tolist()}\n  want {want.tolist()}")
    return good


ok = True
for dtype in (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64):
    x = extremes(dtype, (4, 5))
    for op, reduce in (("ReduceMin", np.min), ("ReduceMax", np.max)):
        name = f"{op.lower()}_{np.dtype(dtype).name}"
        ok &= run(name, helper.make_node(op, ["x0"], ["y"], axes=[1], keepdims=0), [x],
                  reduce(x, axis=1), 13)

b = rng.random((6, 3)) < 0.5
b[0], b[1] = True, False
for op, reduce in (("ReduceMin", np.all), ("ReduceMax", np.any)):
    axes = np.array([1], np.int64)
    node = helper.make_node(op, ["x0", "x1"], ["y"], keepdims=0)
    ok &= run(f"{op.lower()}_bool", node, [b, axes], reduce(b, axis=1), 20, bind={1: "1"})

for dtype in (np.int8, np.int32, np.int64):
    bits = np.iinfo(dtype).bits
    x = extremes(dtype, (12,))
    amount = np.array([0, 1, 3, bits - 1, bits, bits + 5, -1, -bits] * 2, dtype)[:12]
    # ONNX 28: a negative amount, or one of at least the width, leaves what
    # sign extension alone gives: -1 for a right shift of a negative x, else 0.
    out = (amount < 0) | (amount >= bits)
    safe = np.where(out, 0, amount)
    left = np.where(out, 0, x << safe).astype(dtype)
    right = np.where(out, np.where(x < 0, -1, 0), x >> safe).astype(dtype)
    for direction, want in (("LEFT", left), ("RIGHT", right)):
        name = f"bitshift_{direction.lower()}_{np.dtype(dtype).name}"
        node = helper.make_node("BitShift", ["x0", "x1"], ["y"], direction=direction)
        ok &= run(name, node, [x, amount], want, 28)

x, y = extremes(np.int32, (3, 4)), extremes(np.int32, (3, 4))[0]
for op, f in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
              ("BitwiseXor", np.bitwise_xor)):
    ok &= run(op.lower(), helper.make_node(op, ["x0", "x1"], ["y"]), [x, y], f(x, y), 18)
u = extremes(np.uint16, (7,))
ok &= run("bitwisenot_uint16", helper.make_node("BitwiseNot", ["x0"], ["y"]), [u], ~u, 18)

inf = np.inf
a = np.array([0, -0.0, 5.5, -5.5, 5.5, -5.5, -3, 3, inf, 1, 1, 7.25], np.float32)
d = np.array([-2, 2, 2, 2, -2, -2, inf, -inf, 2, 0, -0.0, 0.5], np.float32)
with np.errstate(invalid="ignore", divide="ignore"):
    want = np.mod(a, d)  # numpy's mod is Python's, signed zeros included
ok &= run("mod_fmod0_float", helper.make_node("Mod", ["x0", "x1"], ["y"], fmod=0), [a, d],
          want, 28)

# CumProd (opset 26) along an axis of 13 (not a power of two), every
# combination of exclusive and reverse, exact on int64.
c = rng.integers(-3, 4, (3, 13)).astype(np.int64)
for exclusive, reverse in ((0, 0), (1, 0), (0, 1), (1, 1)):
    src = c[:, ::-1] if reverse else c
    want = np.cumprod(src, axis=1)
    if exclusive:
        want = np.concatenate([np.ones((3, 1), np.int64), want[:, :-1]], axis=1)
    if reverse:
        want = want[:, ::-1]
    node = helper.make_node("CumProd", ["x0", "x1"], ["y"], exclusive=exclusive, reverse=reverse)
    ok &= run(f"cumprod_e{exclusive}_r{reverse}", node, [c, np.array(1, np.int64)],
              np.ascontiguousarray(want), 26, bind={1: "1"})

# TopK sorting whole int8 rows (K = n) that hold -128 and 127 twice each:
# equal values in index order, and no extreme mistaken for a taken one.
t = extremes(np.int8, (3, 9))
for largest in (1, 0):
    key = -t.astype(np.int64) if largest else t.astype(np.int64)
    order = np.argsort(key, axis=1, kind="stable")
    for output, want in (("values", np.take_along_axis(t, order, axis=1)),
                         ("indices", order.astype(np.int64))):
        outputs = ["y", "other"] if output == "values" else ["other", "y"]
        node = helper.make_node("TopK", ["x0", "x1"], outputs, axis=1, largest=largest)
        ok &= run(f"topk_{output}_largest{largest}", node, [t, np.array([9], np.int64)],
                  want, 11, bind={1: "9"})

# QuantizeLinear to int8 by output_dtype (opset 21, no zero point; it was
# once ignored and quantized as uint8) and to int16 by the zero point's
# type, each with saturation.
q = (rng.standard_normal((4, 6)) * 300).astype(np.float32)
node = helper.make_node("QuantizeLinear", ["x0", "x1"], ["y"], output_dtype=TensorProto.INT8)
ok &= run("quantize_output_dtype_int8", node, [q, np.array(2.0, np.float32)],
          np.clip(np.round(q / 2), -128, 127).astype(np.int8), 21)
node = helper.make_node("QuantizeLinear", ["x0", "x1", "x2"], ["y"])
ok &= run("quantize_int16", node, [q * 100, np.array(0.5, np.float32), np.array(-7, np.int16)],
          np.clip(np.round(q * 100 / 0.5) - 7, -32768, 32767).astype(np.int16), 21)

# TensorScatter (opset 24) of 3 rows into a cache of 5 along axis 2, one
# batch entry from row 1, the other from row 4 wrapping around (circular),
# by ONNX's pseudocode.
cache = rng.integers(-100, 100, (2, 3, 5, 2)).astype(np.int64)
update = rng.integers(-100, 100, (2, 3, 3, 2)).astype(np.int64)
starts = np.array([1, 4], np.int64)
want = cache.copy()
for prefix in np.ndindex(cache.shape[:2]):
    for i in range(update.shape[2]):
        want[prefix + ((starts[prefix[0]] + i) % 5,)] = update[prefix + (i,)]
node = helper.make_node("TensorScatter", ["x0", "x1", "x2"], ["y"], axis=2, mode="circular")
ok &= run("tensorscatter_circular", node, [cache, update, starts], want, 24)

v = rng.standard_normal((3, 4)).astype(np.float32)
v[1] = 0
for p in (1, 2):
    norm = np.linalg.norm(v.astype(np.float64), ord=p, axis=1, keepdims=True)
    want = np.where(norm == 0, 0, v / np.where(norm == 0, 1, norm)).astype(np.float32)
    node = helper.make_node("LpNormalization", ["x0"], ["y"], axis=1, p=p)
    ok &= run(f"lpnorm_p{p}", node, [v], want, 22, tolerance=1e-6)
sys.exit(0 if ok else 1)
