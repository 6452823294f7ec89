"""Weights stored in the types below 8 bits (float8 e4m3fn, e4m3fnuz, e5m2,
e5m2fnuz, float4 e2m1, int4, uint4), decoded by the importer at compile
time, each in a small model as quantized exports write them: the weight an
initializer, dequantized (per tensor, per channel or per block, opset 21)
or cast to float, then multiplied with a float input. Written with the onnx
package of the benchmark virtualenv (which packs those types) and compared
within 1e-5 of the largest value with numpy in float64 on the weights as
onnx.numpy_helper decodes them. ONNX Runtime 1.32 is not the reference: it
has no float4 DequantizeLinear, and on int4 and uint4 weights with a
per-channel or per-tensor zero point it returns other values than numpy and
ONNX's reference implementation (both agree with kiln).

    check_narrow_weights.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261126)
K, N = 16, 8


def weights(data_type):
    """A (K, N) initializer of `data_type` from values it represents."""
    if data_type in (TensorProto.INT4, TensorProto.UINT4):
        low = -8 if data_type == TensorProto.INT4 else 0
        vals = rng.integers(low, low + 16, (K, N))
    elif data_type == TensorProto.FLOAT4E2M1:
        vals = rng.choice([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.5, -1, -3, -6], (K, N))
    else:
        vals = rng.standard_normal((K, N)) * 4
    return helper.make_tensor("w", data_type, [K, N], vals.reshape(-1).tolist())


def model(name, data_type, how):
    w = weights(data_type)
    inits = [w]
    if how == "cast":
        nodes = [helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT)]
    else:
        attrs = {}
        if how == "per_tensor":
            scale = np.array(0.25, np.float32)
        elif how == "per_channel":
            scale, attrs = rng.uniform(0.1, 1, N).astype(np.float32), {"axis": 1}
        else:  # blocks of 4 rows
            scale = rng.uniform(0.1, 1, (K // 4, N)).astype(np.float32)
            attrs = {"axis": 0, "block_size": 4}
        inits.append(onnx.numpy_helper.from_array(scale, "scale"))
        inputs = ["w", "scale"]
        if data_type in (TensorProto.INT4, TensorProto.UINT4):
            zp_shape = list(scale.shape)
            zp = rng.integers(-2 if data_type == TensorProto.INT4 else 0, 3, zp_shape)
            inits.append(helper.make_tensor("zp", data_type, zp_shape,
                                            np.asarray(zp).reshape(-1).tolist()))
            inputs.append("zp")
        nodes = [helper.make_node("DequantizeLinear", inputs, ["wf"], **attrs)]
    nodes.append(helper.make_node("MatMul", ["x", "wf"], ["y"]))
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, K])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, N])],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 11
    onnx.checker.check_model(m)
    path = work / f"{name}.onnx"
    onnx.save(m, str(path))
    return path


def reference(m, how, x):
    """x @ the dequantized weight, in float64 with numpy."""
    init = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
    w = init["w"]
    if how != "cast":
        scale, zp = init["scale"], init.get("zp", np.zeros_like(init["scale"]))
        if how == "per_block":
            scale, zp = np.repeat(scale, 4, axis=0), np.repeat(zp, 4, axis=0)
        w = (w - zp) * scale
    return x.astype(np.float64) @ w


CASES = [("e4m3fn_per_channel", TensorProto.FLOAT8E4M3FN, "per_channel"),
         ("e4m3fnuz_per_tensor", TensorProto.FLOAT8E4M3FNUZ, "per_tensor"),
         ("e5m2_cast", TensorProto.FLOAT8E5M2, "cast"),
         ("e5m2fnuz_per_channel", TensorProto.FLOAT8E5M2FNUZ, "per_channel"),
         ("float4_per_block", TensorProto.FLOAT4E2M1, "per_block"),
         ("int4_per_block", TensorProto.INT4, "per_block"),
         ("int4_per_channel", TensorProto.INT4, "per_channel"),
         ("uint4_per_tensor", TensorProto.UINT4, "per_tensor"),
         ("uint4_per_block", TensorProto.UINT4, "per_block")]

ok = True
x = rng.standard_normal((3, K)).astype(np.float32)
for name, data_type, how in CASES:
    path = model(name, data_type, how)
    want = reference(onnx.load(str(path)), how, x)
    got = model_files.compile_and_run(bin_dir, work, name, path, [x])
    error = float(np.max(np.abs(got - want)))
    good = error <= 1e-5 * float(np.max(np.abs(want)))
    ok &= good
    print(f"{name}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
sys.exit(0 if ok else 1)
