"""Differentiates imported ONNX recurrent ops and TopK and checks against
finite differences.

Builds a bidirectional LSTM (with bias, initial states and peepholes) and a
GRU of each linear_before_reset in float64 with the onnx package, imports
each with kiln-translate, derives the vector-Jacobian product with
kiln-opt --kiln-grad, compiles it and runs it with kiln-run on random
inputs and output cotangents. For every input, the gradient's inner product
with a random direction must match the central difference of
sum(cotangent * output) along that direction, computed with the compiled
forward function. The derived function must hold no run-time stack
(kiln.stack_*): the recurrence is a kiln.for with a static trip count, and
TopK a kiln.sort whose gradient scatters the cotangent back.

    check_recurrent_gradient.py BIN_DIR WORK_DIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
SEQ, BATCH, INPUT, HIDDEN, DIRS = 4, 2, 3, 3, 2


def lstm():
    shapes = [("X", [SEQ, BATCH, INPUT]), ("W", [DIRS, 4 * HIDDEN, INPUT]),
              ("R", [DIRS, 4 * HIDDEN, HIDDEN]), ("B", [DIRS, 8 * HIDDEN]),
              ("initial_h", [DIRS, BATCH, HIDDEN]), ("initial_c", [DIRS, BATCH, HIDDEN]),
              ("P", [DIRS, 3 * HIDDEN])]
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "", "initial_h", "initial_c", "P"],
                            ["Y", "Y_h", "Y_c"], hidden_size=HIDDEN,
                            direction="bidirectional")
    outputs = [("Y", [SEQ, DIRS, BATCH, HIDDEN]), ("Y_h", [DIRS, BATCH, HIDDEN]),
               ("Y_c", [DIRS, BATCH, HIDDEN])]
    return shapes, node, outputs


def gru(linear_before_reset):
    shapes = [("X", [SEQ, BATCH, INPUT]), ("W", [DIRS, 3 * HIDDEN, INPUT]),
              ("R", [DIRS, 3 * HIDDEN, HIDDEN]), ("B", [DIRS, 6 * HIDDEN]),
              ("initial_h", [DIRS, BATCH, HIDDEN])]
    node = helper.make_node("GRU", ["X", "W", "R", "B", "", "initial_h"], ["Y", "Y_h"],
                            hidden_size=HIDDEN, direction="bidirectional",
                            linear_before_reset=linear_before_reset)
    outputs = [("Y", [SEQ, DIRS, BATCH, HIDDEN]), ("Y_h", [DIRS, BATCH, HIDDEN])]
    return shapes, node, outputs


def run(kmod, function, values, tag):
    args = [bin_dir / "kiln-run", kmod, "--function", function]
    for k, value in enumerate(values):
        path = work / f"{tag}_in{k}.npy"
        np.save(path, value)
        args += ["--input", path]
    out = work / f"{tag}_out"
    subprocess.run(args + ["--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    return out


def top_k(k, axis, largest):
    """TopK of a (4, 7) input; only the values are an output of the graph
    (an index has no gradient). It is a kiln.sort cut to K."""
    node = helper.make_node("TopK", ["X", "K"], ["values", "indices"], axis=axis,
                            largest=largest)
    shape = [4, 7]
    out = list(shape)
    out[axis] = k
    initializers = [helper.make_tensor("K", TensorProto.INT64, [1], [k])]
    return [("X", shape)], node, [("values", out)], initializers


def check(name, shapes, node, outputs, rng, initializers=(), structure="kiln.for"):
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, TensorProto.DOUBLE, s) for n, s in shapes],
        [helper.make_tensor_value_info(n, TensorProto.DOUBLE, s) for n, s in outputs],
        list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    path = work / f"{name}.onnx"
    onnx.save(model, str(path))
    imported = subprocess.run([bin_dir / "kiln-translate", "--onnx-to-mlir", path],
                              check=True, capture_output=True, text=True).stdout
    derived = subprocess.run([bin_dir / "kiln-opt", "-", f"--kiln-grad=function={name}"],
                             input=imported, check=True, capture_output=True,
                             text=True).stdout
    if structure not in derived or "kiln.stack" in derived:
        sys.exit(f"{name}: the derived function should hold {structure} and "
                 f"no kiln.stack_* ops")
    (work / f"{name}_grad.mlir").write_text(derived)
    kmod = work / f"{name}.kmod"
    subprocess.run([bin_dir / "kiln-compile", work / f"{name}_grad.mlir", "-o", kmod],
                   check=True)

    inputs = [rng.uniform(-1, 1, s) for _, s in shapes]
    cotangents = [rng.uniform(-1, 1, s) for _, s in outputs]
    grads_dir = run(kmod, f"{name}_grad", inputs + cotangents, f"{name}_grad")

    def loss(values, tag):
        out = run(kmod, name, values, tag)
        return sum(float(np.sum(c * np.load(out / f"{n}.npy")))
                   for c, (n, _) in zip(cotangents, outputs))

    eps, worst = 1e-6, 0.0
    for k, (input_name, shape) in enumerate(shapes):
        direction = rng.uniform(-1, 1, shape)
        plus = [v + eps * direction if i == k else v for i, v in enumerate(inputs)]
        minus = [v - eps * direction if i == k else v for i, v in enumerate(inputs)]
        numeric = (loss(plus, f"{name}_plus") - loss(minus, f"{name}_minus")) / (2 * eps)
        analytic = float(np.sum(np.load(grads_dir / f"d_{input_name}.npy") * direction))
        error = abs(numeric - analytic) / max(abs(numeric), 1e-3)
        worst = max(worst, error)
        if error > 1e-5:
            print(f"{name}: d/d{input_name} along a random direction: kiln-grad gives "
                  f"{analytic:.9g}, finite differences {numeric:.9g}")
            return False
    print(f"{name}: gradients of all {len(shapes)} inputs match finite differences "
          f"(largest relative difference {worst:.1e})")
    return True


rng = np.random.default_rng(7)
ok = check("lstm", *lstm(), rng)
ok &= check("gru", *gru(0), rng)
ok &= check("gru_linear_before_reset", *gru(1), rng)
for name, (k, axis, largest) in (("top_k", (3, 1, 1)), ("top_k_smallest", (2, 0, 0))):
    shapes, node, outputs, initializers = top_k(k, axis, largest)
    ok &= check(name, shapes, node, outputs, rng, initializers, structure="kiln.sort")
sys.exit(0 if ok else 1)
