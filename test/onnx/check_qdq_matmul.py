"""Quantized MatMul and Gemm in ONNX's QDQ form (a DequantizeLinear of
uint8 or int8 activations per tensor, weights a DequantizeLinear of int8
initializers per tensor or per output column, as ONNX Runtime's static
quantizer writes them) against numpy's float64 product of the dequantized
values: kiln runs them as the 8-bit product in int32 where the CPU has
VNNI's int8 dot products (kiln-cpu-quantized-matmuls), f32 otherwise;
either must agree to f32 rounding. The activations hold their type's
extremes; the weights' int8 values include -127 and 127 in every column.
On a host with VNNI the compiled code of each model must call the int8
product (kiln_dnnl_matmul with its int8 flag). Each is a small model
written with Debian's onnx package, run through kiln-compile and kiln-run.
Runs without the benchmark virtualenv.

    check_qdq_matmul.py BIN_DIR WORK_DIR
"""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261129)
ELEM = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}
cpu_flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
has_vnni = bool(re.search(r"\b(avx512_vnni|avx_vnni)\b", cpu_flags))
INT8_FLAG = 64  # KILN_DNNL_MATMUL_INT8 (backends/cpu/support/DnnlMatmulAbi.h)


def activations(dtype, shape):
    """Random bytes of `dtype`, a quarter of them its extremes."""
    return model_files.extreme_bytes(rng, dtype, shape)


def weights(shape, column_axis):
    """int8 weights in [-127, 127] with both extremes along every column."""
    w = rng.integers(-127, 127, shape, dtype=np.int8, endpoint=True)
    index = [slice(None)] * len(shape)
    other = 1 - column_axis if len(shape) == 2 else len(shape) - 2
    for end, value in ((0, 127), (1, -127)):
        index[other] = end
        w[tuple(index)] = value
    return w


def calls_int8_product(kmod_source):
    """Whether the module compiled from `kmod_source` calls the int8
    product (its LLVM IR passes kiln_dnnl_matmul flags with the int8 bit),
    and how many calls it has."""
    llvm = subprocess.run([bin_dir / "kiln-compile", kmod_source, "--emit=llvm", "-o", "-"],
                          check=True, capture_output=True, text=True).stdout
    flags = [int(f) for f in re.findall(r"call void @kiln_dnnl_matmul\(ptr [^,]*, i64 (\d+),", llvm)]
    return any(f & INT8_FLAG for f in flags), len(flags)


def run(name, gemm, x, x_scale, x_zp, w, w_scales, axis, bias):
    """x (graph input) dequantized, times w (int8 initializer) dequantized
    per tensor (one scale) or per column (`axis`), as MatMul or as Gemm
    with transB (w [N, K]) and a bias."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zp"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["wf"],
                              **({"axis": axis} if w_scales.size > 1 else {}))]
    if gemm:
        nodes.append(helper.make_node("Gemm", ["xf", "wf", "c"], ["y"], transB=1))
    else:
        nodes.append(helper.make_node("MatMul", ["xf", "wf"], ["y"]))
    xd = (x.astype(np.float64) - float(x_zp)) * float(x_scale)
    shape = [1] * w.ndim
    shape[axis] = w_scales.size
    wd = w.astype(np.float64) * w_scales.astype(np.float64).reshape(shape if w_scales.size > 1 else ())
    want = xd @ (wd.T if gemm else wd) + (bias.astype(np.float64) if gemm else 0)
    init = [numpy_helper.from_array(np.array(x_scale, np.float32), "x_scale"),
            numpy_helper.from_array(np.array(x_zp, x.dtype), "x_zp"),
            numpy_helper.from_array(w, "w"),
            numpy_helper.from_array(w_scales.astype(np.float32).reshape(-1) if w_scales.size > 1
                                    else np.array(w_scales.item(), np.float32), "w_scale"),
            numpy_helper.from_array(np.zeros(w_scales.size, np.int8) if w_scales.size > 1
                                    else np.array(0, np.int8), "w_zp")]
    if gemm:
        init.append(numpy_helper.from_array(bias, "c"))
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", ELEM[x.dtype], x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, want.shape)], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    got = model_files.compile_and_run(bin_dir, work, name, path, [x])
    scale = float(np.max(np.abs(want), initial=1e-30))
    good = got.shape == want.shape and float(np.max(np.abs(got - want))) <= 2e-6 * scale
    line = f"{name}: {'ok' if good else 'DIFFERS'}"
    if got.shape == want.shape:
        line += f" (max diff {float(np.max(np.abs(got - want))) / scale:.1e} of the largest)"
    if has_vnni:
        int8, calls = calls_int8_product(path)
        if not int8:
            good = False
            line += f"; no int8 product ({calls} kiln_dnnl_matmul calls)"
    print(line)
    return good


ok = True
SHAPES = [("gemm", (33, 300), 70), ("batched", (2, 17, 260), 65), ("row", (1, 2048), 1000)]
for x_type in (np.uint8, np.int8):
    for shape_name, x_shape, n in SHAPES:
        k = x_shape[-1]
        for per_column in (False, True):
            for gemm in ((False, True) if len(x_shape) == 2 else (False,)):
                x = activations(x_type, x_shape)
                info = np.iinfo(x_type)
                x_zp = x_type(rng.integers(info.min, info.max, endpoint=True))
                x_scale = np.float32(0.02)
                w = weights((n, k) if gemm else (k, n), 0 if gemm else 1)
                w_scales = (rng.uniform(0.001, 0.01, n).astype(np.float32) if per_column
                            else np.array(0.004, np.float32))
                bias = rng.standard_normal(n).astype(np.float32)
                name = (f"qdq_{'gemm' if gemm else 'matmul'}_{np.dtype(x_type).name}_"
                        f"{shape_name}_{'per_column' if per_column else 'per_tensor'}")
                ok &= run(name, gemm, x, x_scale, x_zp, w, w_scales, 0 if gemm else 1, bias)
print("int8 products checked in the compiled code" if has_vnni
      else "no VNNI on this CPU: the f32 products checked, not the int8 ones")
sys.exit(0 if ok else 1)
