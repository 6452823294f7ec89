"""ONNX operators that kiln imports by expanding ONNX's own function
definition of them (Attention-23 with grouped-query heads, causal and
padding masks and softcap; RotaryEmbedding-23 split and interleaved;
GroupNormalization-21), and model-local functions (one calling another,
with an attribute bound by reference), each written with Debian's onnx
package at IR 10, through kiln-compile and kiln-run against numpy in
float64 (1e-5 relative to the largest value). Runs without the benchmark
virtualenv.

    check_function_expansion.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261125)


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(q, k, v, mask=None, causal=False, scale=None, softcap=0.0):
    """Q (B, Hq, S, D), K (B, Hkv, L, D), V (B, Hkv, L, Dv); the Hq/Hkv
    query heads of a group share one key/value head."""
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), k=1)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    return softmax(s) @ v


def rotary(x, cos, sin, positions, interleaved):
    """x (B, H, S, D) rotated over all of D by the caches' rows at
    `positions` (B, S)."""
    c, s = cos[positions][:, None], sin[positions][:, None]
    if interleaved:
        x1, x2 = x[..., 0::2], x[..., 1::2]
    else:
        x1, x2 = np.split(x, 2, axis=-1)
    real, imag = c * x1 - s * x2, s * x1 + c * x2
    if interleaved:
        return np.stack([real, imag], axis=-1).reshape(x.shape)
    return np.concatenate([real, imag], axis=-1)


def group_norm(x, scale, bias, groups, eps):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return g.reshape(x.shape) * scale.reshape(shape) + bias.reshape(shape)


def f32(shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


Q, K, V = f32((2, 4, 5, 8)), f32((2, 2, 5, 8)), f32((2, 2, 5, 6))
KV_MASK = np.ones((2, 1, 5, 5), dtype=bool)
KV_MASK[1, ..., 3:] = False  # the second sequence has 3 real keys
BIAS = f32((5, 5))
X4 = f32((2, 3, 6, 8))
COS = np.cos(rng.uniform(0, 6, (10, 4))).astype(np.float32)
SIN = np.sin(rng.uniform(0, 6, (10, 4))).astype(np.float32)
POS = rng.integers(0, 10, (2, 6)).astype(np.int64)
GN_X, GN_SCALE, GN_BIAS = f32((2, 6, 4, 3)), f32((6,)), f32((6,))

# name: (op, opset, attributes, inputs, reference)
CASES = {
    "attention_gqa_causal": ("Attention", 23, {"is_causal": 1}, [Q, K, V],
                             lambda q, k, v: attention(q, k, v, causal=True)),
    "attention_bool_mask": ("Attention", 23, {"scale": 0.25}, [Q, K, V, KV_MASK],
                            lambda q, k, v, m: attention(q, k, v, m, scale=0.25)),
    "attention_bias_softcap": ("Attention", 23, {"softcap": 2.0}, [Q, K, V, BIAS],
                               lambda q, k, v, b: attention(q, k, v, b, softcap=2.0)),
    "rotary": ("RotaryEmbedding", 23, {}, [X4, COS, SIN, POS],
               lambda x, c, s, p: rotary(x, c, s, p, False)),
    "rotary_interleaved": ("RotaryEmbedding", 23, {"interleaved": 1}, [X4, COS, SIN, POS],
                           lambda x, c, s, p: rotary(x, c, s, p, True)),
    "group_norm": ("GroupNormalization", 21, {"num_groups": 3, "epsilon": 1e-3},
                   [GN_X, GN_SCALE, GN_BIAS],
                   lambda x, s, b: group_norm(x, s, b, 3, 1e-3)),
}

ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
        np.dtype(bool): TensorProto.BOOL}


def value_info(name, value):
    return helper.make_tensor_value_info(name, ELEM[value.dtype], value.shape)


def save(name, graph, opset, functions=(), domains=()):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]
                              + [helper.make_opsetid(d, 1) for d in domains])
    model.functions.extend(functions)
    model.ir_version = 10  # what current exporters write; Debian's checker is not run
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    return path


def run(name, path, inputs):
    return model_files.compile_and_run(bin_dir, work, name, path, inputs)


def compare(name, got, want):
    error = float(np.max(np.abs(got - want)))
    good = got.shape == want.shape and error <= 1e-5 * float(np.max(np.abs(want)))
    print(f"{name}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
    return good


def as64(value):
    return value.astype(np.float64) if value.dtype == np.float32 else value


ok = True
for name, (op, opset, attrs, inputs, reference) in CASES.items():
    want = reference(*[as64(x) for x in inputs])
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], name, [value_info(n, x) for n, x in zip(names, inputs)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, want.shape)])
    ok &= compare(f"{name} ({op}-{opset})", run(name, save(name, graph, opset), inputs), want)

# Local functions: custom.Normalize (GroupNormalization, its group count
# bound to the caller's `groups`) called by custom.NormalizeTwice, which
# the graph calls with groups=2.
groups_ref = onnx.AttributeProto(name="num_groups", ref_attr_name="groups",
                                 type=onnx.AttributeProto.INT)
norm_node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"])
norm_node.attribute.append(groups_ref)
normalize = helper.make_function("custom", "Normalize", ["x", "s", "b"], ["y"], [norm_node],
                                 [helper.make_opsetid("", 21)], ["groups"])
twice_nodes = [helper.make_node("Normalize", ["x", "s", "b"], ["t"], domain="custom"),
               helper.make_node("Normalize", ["t", "s", "b"], ["u"], domain="custom"),
               helper.make_node("Add", ["u", "x"], ["y"])]
for n in twice_nodes[:2]:
    n.attribute.append(onnx.AttributeProto(name="groups", ref_attr_name="groups",
                                           type=onnx.AttributeProto.INT))
twice = helper.make_function("custom", "NormalizeTwice", ["x", "s", "b"], ["y"], twice_nodes,
                             [helper.make_opsetid("", 21), helper.make_opsetid("custom", 1)],
                             ["groups"])
inputs = [GN_X, GN_SCALE, GN_BIAS]
x, s, b = [as64(v) for v in inputs]
once = group_norm(x, s, b, 2, 1e-5)
want = group_norm(once, s, b, 2, 1e-5) + x
graph = helper.make_graph(
    [helper.make_node("NormalizeTwice", ["x0", "x1", "x2"], ["y"], domain="custom", groups=2)],
    "local_functions", [value_info(f"x{i}", v) for i, v in enumerate(inputs)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, want.shape)])
path = save("local_functions", graph, 21, [normalize, twice], ["custom"])
ok &= compare("local_functions", run("local_functions", path, inputs), want)
sys.exit(0 if ok else 1)
