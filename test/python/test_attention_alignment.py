"""The tensor-core attention kernels read their rows 16 bytes at a time
where a buffer starts at a 16-byte boundary, and a half at a time where it
does not: a caller's array may be a view into a larger one. f16 attentions
and their gradients (the head dims of both of the kernels' swizzles; the
gradient with atomics, and on a GPU without) compiled for cuda-on-cpu,
and for cuda where there is a GPU, are called with inputs that start at 0, 2 and 8
bytes past a 16-byte boundary, which the runtime reads in place. Every
placement gives the same bits as the aligned one, and all of them match a
float64 evaluation in numpy."""

import os
import subprocess

import numpy as np
import pytest

import kiln_runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("KILN_BIN_DIR", os.path.join(ROOT, "build", "bin"))

# (batch, queries, keys, head dim, value dim): 64 dims are rows of 32 words
# (the one swizzle), 96 and 32 rows of 48 and 16 (the other); the query
# and key counts are not multiples of the 64-row tiles.
SHAPES = {
    "d64": (2, 70, 90, 64, 64),
    "d96": (1, 33, 50, 96, 32),
}
SCALE = 0.125


def program(name, shape):
    b, nq, nk, d, dv = shape
    q = f"tensor<{b}x{nq}x{d}xf16>"
    k = f"tensor<{b}x{nk}x{d}xf16>"
    v = f"tensor<{b}x{nk}x{dv}xf16>"
    o = f"tensor<{b}x{nq}x{dv}xf16>"
    lse = f"tensor<{b}x{nq}xf32>"
    return f"""
func.func @{name}(%q: {q}, %k: {k}, %v: {v}, %do: {o}) -> ({o}, {lse}, {q}, {k}, {v}) {{
  %o, %lse = kiln.attention %q, %k, %v {{causal, scale = {SCALE} : f64}} : {q}, {k}, {v}
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {{causal, scale = {SCALE} : f64}} : {q}, {k}, {v}, {o}, {lse}
  return %o, %lse, %dq, %dk, %dv : {o}, {lse}, {q}, {k}, {v}
}}
"""


def compile_module(tmp_path, target, *flags):
    source = tmp_path / "attention.mlir"
    source.write_text("".join(program(n, s) for n, s in SHAPES.items()))
    out = tmp_path / f"attention.{target}{''.join(flags)}.kmod"
    subprocess.run([os.path.join(BIN, "kiln-compile"), str(source),
                    f"--target={target}", *flags, "-o", str(out)],
                   check=True)
    return out


# On the host at -O1, which compiles the kernels three times faster than
# the default and runs the same staging.
MODULES = [("cuda-on-cpu", ("-O1",)), ("cuda", ()),
           ("cuda", ("--cuda-deterministic",))]


@pytest.fixture(scope="module", params=MODULES,
                ids=lambda m: m[0] + "".join(m[1]))
def module(request, tmp_path_factory):
    target, flags = request.param
    path = compile_module(tmp_path_factory.mktemp("attention"), target, *flags)
    if target == "cuda-on-cpu":
        return target, flags, kiln_runtime.load(path)
    try:
        return target, flags, kiln_runtime.load(path, "cuda")
    except RuntimeError as exc:
        if os.environ.get("KILN_REQUIRE_CUDA") == "1":
            raise
        pytest.skip(f"no CUDA device: {exc}")


def placed(array, offset):
    """A copy of `array` that starts `offset` bytes past a 16-byte
    boundary, as a view into a larger buffer."""
    raw = np.zeros(array.nbytes + 32, np.uint8)
    start = (-raw.ctypes.data) % 16 + offset
    view = raw[start:start + array.nbytes].view(array.dtype).reshape(
        array.shape)
    view[...] = array
    assert view.ctypes.data % 16 == offset
    return view


def reference(q, k, v, do):
    """o, lse, dq, dk, dv in float64: softmax(scale q k^T) v, keys past a
    query's own index masked (causal, top-left aligned)."""
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    s = SCALE * np.einsum("bqd,bkd->bqk", q, k)
    nq, nk = s.shape[1:]
    s = np.where(np.arange(nk)[None, :] > np.arange(nq)[:, None], -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    p = e / total
    o = p @ v
    lse = (m + np.log(total))[..., 0]
    dv = np.einsum("bqk,bqd->bkd", p, do)
    dp = do @ np.swapaxes(v, 1, 2)
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))
    dq = SCALE * ds @ k
    dk = SCALE * np.einsum("bqk,bqd->bkd", ds, q)
    return o, lse, dq, dk, dv


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_unaligned_inputs_read_the_same_values(module, name):
    target, flags, loaded = module
    b, nq, nk, d, dv = SHAPES[name]
    rng = np.random.default_rng(sorted(SHAPES).index(name))
    inputs = [rng.standard_normal(shape).astype(np.float16)
              for shape in ((b, nq, d), (b, nk, d), (b, nk, dv), (b, nq, dv))]
    want = reference(*inputs)
    first = None
    for offset in (0, 2, 8):
        got = loaded[name](*(placed(x, offset) for x in inputs))
        for label, g, w in zip(("o", "lse", "dq", "dk", "dv"), got, want):
            scale = np.abs(w).max()
            np.testing.assert_allclose(
                g.astype(np.float64), w, rtol=0, atol=2e-2 * scale,
                err_msg=f"{name} {label} at offset {offset}")
        if first is None:
            first = got
            continue
        # dq's f32 sums are added by atomics in no fixed order on a GPU.
        exact = target == "cuda-on-cpu" or "--cuda-deterministic" in flags
        for label, g, f in zip(("o", "lse", "dq", "dk", "dv"), got, first):
            if exact or label != "dq":
                np.testing.assert_array_equal(
                    g, f, err_msg=f"{name} {label}: offset {offset} against 0")
