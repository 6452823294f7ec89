"""BatchNormalization after Conv: folded into the convolution, against numpy.

Builds models with the onnx package where a BatchNormalization reads a
Conv (with and without its bias, followed by more layers, and once where
the Conv's own output is also a graph output), checks that the imported IR
has no kiln.mul left (the BN was folded into the weight and bias), then
compiles each with kiln-compile, runs it with kiln-run on random inputs and
compares every output with a float64 numpy reference (direct convolution,
then BN as the operator defines it) to 1e-4 relative. A BN whose
parameters are graph inputs is not folded and must still be right.

    check_batchnorm_fold.py BIN_DIR WORK_DIR [SEED]
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
seed = int(sys.argv[3]) if len(sys.argv) > 3 else int(np.random.SeedSequence().entropy % 2**32)
print(f"seed {seed} (check_batchnorm_fold.py BIN_DIR WORK_DIR {seed} repeats this run)")
rng = np.random.default_rng(seed)


def conv(x, w, b, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    y = np.zeros((n, o, h - kh + 1, wd - kw + 1))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", x[:, :, i:i + y.shape[2], j:j + y.shape[3]],
                           w[:, :, i, j])
    return y + (0 if b is None else b[None, :, None, None])


def bn(x, scale, bias, mean, var, eps):
    shape = (1, -1, 1, 1)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
            * scale.reshape(shape) + bias.reshape(shape))


def params(channels):
    return [rng.standard_normal(channels), rng.standard_normal(channels),
            rng.standard_normal(channels), rng.uniform(0.5, 2.0, channels)]


def run(name, nodes, inits, inputs, outputs, feeds, expect_folded):
    tensor = lambda n, a: numpy_helper.from_array(np.asarray(a, np.float32), n)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(feeds[n].shape))
         for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
         for n, a in outputs.items()],
        [tensor(n, a) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    ir = subprocess.run([bin_dir / "kiln-translate", "--onnx-to-mlir", path],
                        capture_output=True, text=True, check=True).stdout
    if expect_folded and "kiln.mul" in ir:
        sys.exit(f"{name}: the BatchNormalization was not folded:\n{ir}")
    if not expect_folded and "kiln.mul" not in ir:
        sys.exit(f"{name}: expected BatchNormalization as a multiply-add:\n{ir}")
    kmod = work / f"{name}.kmod"
    subprocess.run([bin_dir / "kiln-compile", path, "-o", kmod], check=True)
    args = [bin_dir / "kiln-run", kmod, "--output-dir", work / f"{name}_out"]
    for n in inputs:
        np.save(work / f"{name}_{n}.npy", feeds[n].astype(np.float32))
        args += ["--input", work / f"{name}_{n}.npy"]
    subprocess.run(args, check=True, capture_output=True)
    for n, want in outputs.items():
        got = np.load(work / f"{name}_out" / f"{n}.npy")
        error = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)
        if error > 1e-4:
            sys.exit(f"{name}: output {n} differs from numpy: {error:.2e}")
    print(f"{name}: ok")


x = rng.standard_normal((2, 4, 12, 12))
w = rng.standard_normal((8, 4, 3, 3)) * 0.3
b = rng.standard_normal(8)
w2 = rng.standard_normal((6, 8, 1, 1)) * 0.3
p1, p2 = params(8), params(6)
eps = 1e-3
bn_node = lambda i, o, pre: helper.make_node(
    "BatchNormalization", [i, pre + "s", pre + "b", pre + "m", pre + "v"], [o], epsilon=eps)
named = lambda pre, p: dict(zip([pre + "s", pre + "b", pre + "m", pre + "v"], p))

# Conv with a bias -> BN -> Relu -> Conv without one -> BN; the first
# Conv's output is a graph output too.
c = conv(x, w, b, 1)
r = np.maximum(bn(c, *p1, eps), 0)
y = bn(conv(r, w2, None, 0), *p2, 1e-5)
run("conv_bn_chain",
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
     bn_node("c", "n", "p"), helper.make_node("Relu", ["n"], ["r"]),
     helper.make_node("Conv", ["r", "w2"], ["c2"]),
     helper.make_node("BatchNormalization", ["c2", "qs", "qb", "qm", "qv"], ["y"])],
    {"w": w, "b": b, "w2": w2, **named("p", p1), **named("q", p2)},
    ["x"], {"y": y, "c": c}, {"x": x}, True)

# The BN's parameters are graph inputs: not folded.
run("conv_bn_inputs",
    [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), bn_node("c", "y", "p")],
    {"w": w}, ["x", "ps", "pb", "pm", "pv"], {"y": bn(conv(x, w, None, 1), *p1, eps)},
    {"x": x, **named("p", p1)}, False)
