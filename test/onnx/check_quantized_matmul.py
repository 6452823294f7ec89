"""MatMulInteger and QLinearMatMul against numpy, on products large enough
for oneDNN's int8 kernels (kiln computes them as the 8-bit product minus the
zero points' share, from column sums of constant weights computed at
compile time) and on small ones (loops): int8 and uint8 A and B holding
their type's extremes; zero points absent, zero, scalar constants, scalars
given at run time (as DynamicQuantizeLinear makes them), one per row of A
and one per column of B; 2-d, batched A by 2-d B, batched both, and a
vector A. numpy computes the exact int64 product of the shifted matrices;
kiln must match it bit for bit (MatMulInteger) or to the last rounding
step (QLinearMatMul's f32 requantization). Each is a one-node model written
with Debian's onnx package, run through kiln-compile and kiln-run. Runs
without the benchmark virtualenv.

    check_quantized_matmul.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261128)

ELEM = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
        np.dtype(np.int32): TensorProto.INT32, np.dtype(np.float32): TensorProto.FLOAT}


def bytes_of(dtype, shape):
    """Random bytes of `dtype`, a quarter of them its extremes."""
    return model_files.extreme_bytes(rng, dtype, shape)


def run(name, op, operands, constant, want, opset=10):
    """The one-node model of `op` on `operands` (name, value) pairs, the
    names in `constant` stored as initializers, the others graph inputs."""
    node = helper.make_node(op, [n for n, _ in operands], ["y"])
    inputs = [(n, v) for n, v in operands if n and n not in constant]
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, ELEM[v.dtype], v.shape) for n, v in inputs],
        [helper.make_tensor_value_info("y", ELEM[want.dtype], want.shape)],
        initializer=[numpy_helper.from_array(v, n) for n, v in operands if n in constant])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    got = model_files.compile_and_run(bin_dir, work, name, path, [v for _, v in inputs])
    if want.dtype.kind == "f" or op == "QLinearMatMul":
        # One requantization step apart at most (f32 rounding of the scale).
        good = got.shape == want.shape and \
            int(np.max(np.abs(got.astype(np.int64) - want.astype(np.int64)), initial=0)) <= 1
    else:
        good = got.shape == want.shape and np.array_equal(got, want)
    print(f"{name}: {'ok' if good else 'DIFFERS'}")
    if not good:
        bad = np.argwhere(got != want)[:5] if got.shape == want.shape else []
        print(f"  shapes {got.shape} {want.shape}; first differences at {bad.tolist()}")
    return good


def zero_point(kind, dtype, length):
    """A zero point of `kind` for a matrix of `dtype`: None (absent), zero,
    scalar, or a vector of `length` (one per row of A or column of B)."""
    info = np.iinfo(dtype)
    if kind == "absent":
        return None
    if kind == "zero":
        return np.zeros((), dtype)
    if kind == "scalar":
        return np.array(rng.integers(info.min, info.max, endpoint=True), dtype)
    return rng.integers(info.min, info.max, (length,), dtype=dtype, endpoint=True)


def shifted(x, zp, axis):
    """x - zp in int64, a vector zero point along `axis` of x."""
    wide = x.astype(np.int64)
    if zp is None:
        return wide
    z = zp.astype(np.int64)
    if z.ndim == 1:
        shape = [1] * wide.ndim
        shape[axis] = z.size
        z = z.reshape(shape)
    return wide - z


ok = True
# (name, A shape, B shape): the library's sizes, small ones, batches, a
# vector.
SHAPES = [("gemm", (33, 300), (300, 70)), ("small", (5, 7), (7, 3)),
          ("batched_a", (2, 17, 260), (260, 65)),
          ("batched_both", (3, 16, 96), (3, 96, 40)), ("vector", (96,), (96, 50))]
CASES = [  # (A zero point, B zero point, which are initializers)
    ("absent", "absent", ("b",)), ("scalar", "zero", ("b", "b_zp")),
    ("scalar", "absent", ("b",)), ("scalar", "scalar", ("b", "b_zp")),
    ("scalar", "scalar", ()), ("rows", "columns", ("b", "a_zp", "b_zp")),
    ("zero", "columns", ("b", "a_zp", "b_zp"))]
for a_type in (np.uint8, np.int8):
    for b_type in (np.int8, np.uint8):
        for shape_name, a_shape, b_shape in SHAPES:
            for a_kind, b_kind, constant in CASES:
                if len(a_shape) < 2 and a_kind == "rows":
                    continue
                a = bytes_of(a_type, a_shape)
                b = bytes_of(b_type, b_shape)
                rows = a_shape[-2] if len(a_shape) >= 2 else 1
                a_zp = zero_point(a_kind, a_type, rows)
                b_zp = zero_point(b_kind, b_type, b_shape[-1])
                lhs = shifted(a, a_zp, a.ndim - 2 if a.ndim >= 2 else 0)
                rhs = shifted(b, b_zp, b.ndim - 1)
                want = np.matmul(lhs, rhs).astype(np.int32)
                name = (f"matmulinteger_{np.dtype(a_type).name}_{np.dtype(b_type).name}_"
                        f"{shape_name}_{a_kind}_{b_kind}_{'_'.join(constant) or 'inputs'}")
                operands = [("a", a), ("b", b)]
                if a_zp is not None or b_zp is not None:
                    operands.append(("a_zp", a_zp) if a_zp is not None else ("", None))
                if b_zp is not None:
                    operands.append(("b_zp", b_zp))
                ok &= run(name, "MatMulInteger", operands, constant, want)

# QLinearMatMul: uint8 A by constant int8 B into uint8, and int8 A by
# uint8 B into int8; a scalar zero point for A, one per column for B.
for a_type, b_type, y_type in ((np.uint8, np.int8, np.uint8), (np.int8, np.uint8, np.int8)):
    for shape_name, a_shape, b_shape in SHAPES[:4]:
        a = bytes_of(a_type, a_shape)
        b = bytes_of(b_type, b_shape)
        a_zp, b_zp = zero_point("scalar", a_type, 0), zero_point("columns", b_type, b_shape[-1])
        y_zp = zero_point("scalar", y_type, 0)
        a_scale = np.array(0.02, np.float32)
        b_scale = np.array(0.03, np.float32)
        k = a_shape[-1]
        y_scale = np.array(0.0006 * 40 * np.sqrt(k), np.float32)
        product = np.matmul(shifted(a, a_zp, a.ndim - 2), shifted(b, b_zp, b.ndim - 1))
        multiplier = np.float32(a_scale * b_scale / y_scale)
        scaled = product.astype(np.float32) * multiplier
        info = np.iinfo(y_type)
        want = np.clip(np.round(scaled) + int(y_zp), info.min, info.max).astype(y_type)
        name = (f"qlinearmatmul_{np.dtype(a_type).name}_{np.dtype(b_type).name}_{shape_name}")
        operands = [("a", a), ("a_scale", a_scale), ("a_zp", a_zp), ("b", b),
                    ("b_scale", b_scale), ("b_zp", b_zp), ("y_scale", y_scale), ("y_zp", y_zp)]
        ok &= run(name, "QLinearMatMul", operands,
                  ("b", "b_scale", "b_zp", "y_scale", "y_zp"), want)

sys.exit(0 if ok else 1)
