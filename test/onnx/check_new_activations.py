"""ONNX operators newer than Debian's ONNX 1.12 (Gelu-20 both ways,
Mish-18, Swish-24, RMSNormalization-23), each a one-node model written with
Debian's onnx package at IR 10 and its opset, through kiln-compile and
kiln-run against numpy in float64 (1e-5 relative to the largest value).
Also checks that Gelu with an unknown `approximate` is refused by name.
Runs without the benchmark virtualenv, so the suite checks these ops
everywhere.

    check_new_activations.py BIN_DIR WORK_DIR
"""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261126)
erf = np.vectorize(math.erf)


def softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def rms(x, scale, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps) * scale


X = rng.standard_normal((3, 4, 8)) * 3
SCALE = rng.standard_normal((8,))
# name: (op, opset, attributes, extra inputs, reference)
CASES = {
    "gelu": ("Gelu", 20, {}, [], lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    "gelu_tanh": ("Gelu", 20, {"approximate": "tanh"}, [],
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "mish": ("Mish", 18, {}, [], lambda x: x * np.tanh(softplus(x))),
    "swish": ("Swish", 24, {"alpha": 0.75}, [], lambda x: x / (1 + np.exp(-0.75 * x))),
    "rms_norm": ("RMSNormalization", 23, {"axis": -1, "epsilon": 1e-3}, [SCALE],
                 lambda x, s: rms(x, s, -1, 1e-3)),
    "rms_norm_axis1": ("RMSNormalization", 23, {"axis": 1}, [SCALE],
                       lambda x, s: rms(x, s, 1, 1e-5)),
}


def write(name, op, opset, attrs, extra):
    inputs = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, X.shape)]
    inputs += [helper.make_tensor_value_info(f"p{i}", onnx.TensorProto.FLOAT, e.shape)
               for i, e in enumerate(extra)]
    node = helper.make_node(op, [i.name for i in inputs], ["y"], name=name, **attrs)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, X.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10  # what current exporters write; Debian's checker is not run
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    return path


ok = True
for name, (op, opset, attrs, extra, reference) in CASES.items():
    path = write(name, op, opset, attrs, extra)
    kmod = work / f"{name}.kmod"
    subprocess.run([bin_dir / "kiln-compile", path, "-o", kmod], check=True)
    args = [bin_dir / "kiln-run", kmod]
    for i, value in enumerate([X] + extra):
        np.save(work / f"{name}_in{i}.npy", value.astype(np.float32))
        args += ["--input", work / f"{name}_in{i}.npy"]
    subprocess.run(args + ["--output-dir", work / name], check=True,
                   stdout=subprocess.DEVNULL)
    got = np.load(work / name / "y.npy")
    want = reference(X.astype(np.float32).astype(np.float64),
                     *[e.astype(np.float32).astype(np.float64) for e in extra])
    error = float(np.max(np.abs(got - want)))
    good = error <= 1e-5 * float(np.max(np.abs(want)))
    ok &= good
    print(f"{name} ({op}-{opset}): max error {error:.2e} {'ok' if good else 'DIFFERS'}")

path = write("gelu_bad", "Gelu", 20, {"approximate": "erf"}, [])
done = subprocess.run([bin_dir / "kiln-compile", path, "-o", work / "bad.kmod"],
                      capture_output=True, text=True)
message = "attribute approximate is 'erf'; Gelu takes 'none' or 'tanh'"
refused = done.returncode == 1 and message in done.stderr and "Gelu, opset 20" in done.stderr
print(f"gelu_bad: {'refused by name' if refused else 'NOT refused as expected: ' + done.stderr}")
ok &= refused
sys.exit(0 if ok else 1)
