"""Operators computed from their definitions, against numpy on random
inputs:

- Det vs numpy.linalg.det (batches, singular and permuted matrices);
- BitCast vs ndarray.view (NaN payloads, -0.0, subnormals, every width);
- ReverseSequence vs reversing slices (lengths 0 to T, both axis orders);
- BatchNormalization-15's training mode (batch statistics, running
  averages);
- Adagrad, Adam and Momentum (standard and Nesterov) of
  ai.onnx.preview.training at T = 0 and T > 0, two tensors at once;
- Binarizer and ArrayFeatureExtractor of ai.onnx.ml.

Each case is a one-node model through kiln-compile and kiln-run. Runs with
Debian's python (numpy and onnx).

    check_numeric_ops.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261128)
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
              np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int16): TensorProto.INT16,
              np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
              np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.uint32): TensorProto.UINT32,
              np.dtype(np.uint64): TensorProto.UINT64}


def run(name, node, inputs, outputs, opsets=(("", 22),), constants=None):
    """A one-node model of `node` over `inputs` (name -> array) and
    `constants` (initializers), with `outputs` (name -> example array);
    returns kiln's outputs by name."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, NP_TO_ONNX[v.dtype], v.shape) for k, v in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (constants or {}).items()])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 10
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    first = next(iter(outputs))
    got = {first: model_files.compile_and_run(bin_dir, work, name, path,
                                              list(inputs.values()), output=first)}
    for k in list(outputs)[1:]:
        got[k] = np.load(work / name / f"{k}.npy")
    return got


def compare(name, got, want, tolerance=1e-5, exact=False):
    ok = True
    for key, expected in want.items():
        g = got[key]
        if g.shape != expected.shape or g.dtype != expected.dtype:
            print(f"{name}/{key}: {g.dtype}{g.shape}, expected {expected.dtype}{expected.shape} DIFFERS")
            ok = False
            continue
        if exact:
            good = g.tobytes() == expected.tobytes()
            print(f"{name}/{key}: {'bit for bit' if good else 'DIFFERS'}")
        else:
            error = float(np.max(np.abs(g.astype(np.float64) - expected))) if g.size else 0.0
            good = error <= tolerance * max(float(np.max(np.abs(expected))), 1.0)
            print(f"{name}/{key}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
        ok &= good
    return ok


ok = True

# Det: random batches, a singular matrix (a repeated row), and matrices
# whose largest entries sit off the diagonal (row swaps on every step).
m = rng.standard_normal((2, 3, 5, 5))
m[0, 1, 3] = m[0, 1, 1]
m[1, 2] = np.eye(5)[[3, 0, 4, 1, 2]] * 4 + rng.standard_normal((5, 5)) * 0.1
got = run("det", helper.make_node("Det", ["m"], ["d"]), {"m": m},
          {"d": np.zeros((2, 3))})
ok &= compare("det", got, {"d": np.linalg.det(m)}, tolerance=1e-10)
m32 = rng.standard_normal((7, 7)).astype(np.float32)
got = run("det_single", helper.make_node("Det", ["m"], ["d"]), {"m": m32},
          {"d": np.zeros((), np.float32)})
ok &= compare("det_single", got,
              {"d": np.array(np.linalg.det(m32.astype(np.float64)), np.float32)},
              tolerance=1e-5)

# BitCast: special float patterns in and out, and every width.
special = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-40, -3e-42,
                    3.4e38], np.float32)
payload = np.array([0x7FC00001, 0xFFA00000, 0x00000001, 0x80000000], np.uint32).view(np.float32)
floats = np.concatenate([special, payload])
cases = [("f32_i32", floats, np.int32), ("f32_u32", floats, np.uint32),
         ("f64_i64", rng.standard_normal(9) * 1e300, np.int64),
         ("f16_i16", np.array([0, -0.0, 1, 65504, 6e-8, -np.inf], np.float16), np.int16),
         ("i32_f32", floats.view(np.int32), np.float32),
         ("u64_f64", rng.integers(0, 2**63, 6, dtype=np.int64).astype(np.uint64), np.float64),
         ("i8_u8", np.arange(-128, 128, 17).astype(np.int8), np.uint8),
         ("u16_f16", rng.integers(0, 65535, 8).astype(np.uint16), np.float16)]
for name, x, to in cases:
    node = helper.make_node("BitCast", ["x"], ["y"], to=NP_TO_ONNX[np.dtype(to)])
    want = x.view(to)
    got = run(f"bitcast_{name}", node, {"x": x}, {"y": want}, opsets=(("", 26),))
    ok &= compare(f"bitcast_{name}", got, {"y": want}, exact=True)

# ReverseSequence with lengths from 0 to T, both axis orders.
x = rng.standard_normal((6, 4, 3)).astype(np.float32)
for time_axis, batch_axis in ((0, 1), (1, 0)):
    steps, batch = x.shape[time_axis], x.shape[batch_axis]
    lengths = rng.integers(0, steps + 1, batch).astype(np.int64)
    lengths[0], lengths[-1] = 0, steps
    want = x.copy()
    for b in range(batch):
        n = lengths[b]
        if time_axis == 0:
            want[:n, b] = x[:n, b][::-1]
        else:
            want[b, :n] = x[b, :n][::-1]
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"],
                            time_axis=time_axis, batch_axis=batch_axis)
    got = run(f"reverse_sequence_{time_axis}", node, {"x": x, "lens": lengths}, {"y": want})
    ok &= compare(f"reverse_sequence_{time_axis}", got, {"y": want}, exact=True)

# BatchNormalization in training mode: normalized by the batch's
# statistics (biased variance), running averages with momentum.
x = rng.standard_normal((4, 3, 5, 2)).astype(np.float32) * 3 + 1
scale, bias, mean, var = (rng.standard_normal(3).astype(np.float32) for _ in range(4))
var = np.abs(var)
node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                        training_mode=1, momentum=0.8, epsilon=1e-3)
axes = (0, 2, 3)
bm, bv = x.astype(np.float64).mean(axis=axes), x.astype(np.float64).var(axis=axes)
shape = (1, 3, 1, 1)
want = {"y": ((x - bm.reshape(shape)) / np.sqrt(bv.reshape(shape) + 1e-3) * scale.reshape(shape)
              + bias.reshape(shape)).astype(np.float32),
        "rm": (mean * 0.8 + bm * 0.2).astype(np.float32),
        "rv": (var * 0.8 + bv * 0.2).astype(np.float32)}
got = run("batchnorm_training", node, {"x": x, "s": scale, "b": bias, "m": mean, "v": var},
          want, opsets=(("", 15),))
ok &= compare("batchnorm_training", got, want)

# The optimizers of ai.onnx.preview.training on two tensors at once.
TRAINING = (("", 22), ("ai.onnx.preview.training", 1))
xs = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(5).astype(np.float32)]
gs = [rng.standard_normal(x.shape).astype(np.float32) for x in xs]
states = [[np.abs(rng.standard_normal(x.shape)).astype(np.float32) for x in xs] for _ in range(2)]
r = np.array(0.1, np.float32)
for t in (0, 3):
    tt = np.array(t, np.int64)
    common = {"r": r, "t": tt, "x1": xs[0], "x2": xs[1], "g1": gs[0], "g2": gs[1]}

    # Adagrad: decay_factor, epsilon, norm_coefficient.
    inputs = dict(common, h1=states[0][0], h2=states[0][1])
    node = helper.make_node("Adagrad", list(inputs), ["nx1", "nx2", "nh1", "nh2"],
                            domain="ai.onnx.preview.training", decay_factor=0.1,
                            epsilon=1e-6, norm_coefficient=0.01)
    want = {}
    for i in range(2):
        rate = 0.1 / (1 + t * 0.1)
        g = 0.01 * xs[i].astype(np.float64) + gs[i]
        h = states[0][i] + g * g
        want[f"nx{i + 1}"] = (xs[i] - rate * g / (np.sqrt(h) + 1e-6)).astype(np.float32)
        want[f"nh{i + 1}"] = h.astype(np.float32)
    want = {k: want[k] for k in ("nx1", "nx2", "nh1", "nh2")}
    got = run(f"adagrad_{t}", node, inputs, want, opsets=TRAINING)
    ok &= compare(f"adagrad_{t}", got, want)

    # Adam with both norm coefficients.
    inputs = dict(common, v1=states[0][0], v2=states[0][1], h1=states[1][0], h2=states[1][1])
    node = helper.make_node("Adam", list(inputs), ["nx1", "nx2", "nv1", "nv2", "nh1", "nh2"],
                            domain="ai.onnx.preview.training", alpha=0.9, beta=0.99,
                            epsilon=1e-7, norm_coefficient=0.02, norm_coefficient_post=0.01)
    want = {}
    for i in range(2):
        g = 0.02 * xs[i].astype(np.float64) + gs[i]
        v = 0.9 * states[0][i] + 0.1 * g
        h = 0.99 * states[1][i] + 0.01 * g * g
        rate = 0.1 * np.sqrt(1 - 0.99**t) / (1 - 0.9**t) if t > 0 else 0.1
        want[f"nx{i + 1}"] = ((1 - 0.01) * (xs[i] - rate * v / (np.sqrt(h) + 1e-7))).astype(np.float32)
        want[f"nv{i + 1}"] = v.astype(np.float32)
        want[f"nh{i + 1}"] = h.astype(np.float32)
    want = {k: want[k] for k in ("nx1", "nx2", "nv1", "nv2", "nh1", "nh2")}
    got = run(f"adam_{t}", node, inputs, want, opsets=TRAINING)
    ok &= compare(f"adam_{t}", got, want)

    # Momentum, standard and Nesterov.
    for mode in ("standard", "nesterov"):
        inputs = dict(common, v1=states[0][0], v2=states[0][1])
        node = helper.make_node("Momentum", list(inputs), ["nx1", "nx2", "nv1", "nv2"],
                                domain="ai.onnx.preview.training", alpha=0.9, beta=0.5,
                                norm_coefficient=0.01, mode=mode)
        want = {}
        for i in range(2):
            g = 0.01 * xs[i].astype(np.float64) + gs[i]
            v = 0.9 * states[0][i] + (0.5 if t > 0 else 1.0) * g
            step = v if mode == "standard" else g + 0.9 * v
            want[f"nx{i + 1}"] = (xs[i] - 0.1 * step).astype(np.float32)
            want[f"nv{i + 1}"] = v.astype(np.float32)
        want = {k: want[k] for k in ("nx1", "nx2", "nv1", "nv2")}
        got = run(f"momentum_{mode}_{t}", node, inputs, want, opsets=TRAINING)
        ok &= compare(f"momentum_{mode}_{t}", got, want)

# ai.onnx.ml: Binarizer and ArrayFeatureExtractor (negative indices count
# from the end).
ML = (("", 22), ("ai.onnx.ml", 5))
x = rng.standard_normal((3, 6)).astype(np.float32)
got = run("binarizer", helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml",
                                        threshold=0.25),
          {"x": x}, {"y": x}, opsets=ML)
ok &= compare("binarizer", got, {"y": (x > 0.25).astype(np.float32)}, exact=True)
idx = np.array([[4, 0, -1, 2]], np.int64)
got = run("array_feature_extractor",
          helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml"),
          {"x": x, "i": idx}, {"y": x[..., [4, 0, 5, 2]]}, opsets=ML)
ok &= compare("array_feature_extractor", got, {"y": x[..., [4, 0, 5, 2]]}, exact=True)
sys.exit(0 if ok else 1)
