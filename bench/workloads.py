"""The benchmark workloads: kiln IR, inputs and an independent numpy reference.

Each workload gives
  - mlir(): kiln-dialect text (kiln_ir.py) and, for gradients, the kiln-grad
    options that bench.py applies with kiln-opt;
  - inputs(rng): float32 numpy arrays in the kiln function's argument order;
  - reference(inputs): the expected outputs, computed in float64 by numpy
    code written independently of the kiln IR (hand-derived gradients);
  - check(outputs, expected): whether a system's outputs agree.
Every system (kiln and each anchor) gets the same input arrays and is checked
against the same reference before it is timed.
"""

import math

import numpy as np

from kiln_ir import Function

GELU_C = math.sqrt(2.0 / math.pi)


def rel_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if not np.all(np.isfinite(got)):
        return float("inf")
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


def round_to_bf16(values):
    """float64 `values` rounded to bfloat16 (through float32, to nearest
    even at each step; exact for values that are f32 already, as the
    operands kiln-autocast casts are)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def check_all(outputs, expected, tol):
    """The largest relative error over outputs, and whether it is <= tol."""
    if len(outputs) != len(expected):
        return float("inf"), False
    worst = max(rel_error(g, w) for g, w in zip(outputs, expected))
    return worst, worst <= tol


def gelu_tanh(z):
    return 0.5 * z * (1.0 + np.tanh(GELU_C * (z + 0.044715 * z ** 3)))


def layer_norm(blk, x, gamma, beta, eps=1e-5):
    """Layer norm over the last dim of a [rows, d] value."""
    rows, d = x.shape
    mean = blk.reduce("mean", x, [1])
    xc = blk.sub(x, blk.broadcast(mean, (rows, d), [0]))
    var = blk.reduce("mean", blk.mul(xc, xc), [1])
    r = blk.unary("rsqrt", blk.add(var, blk.constant(eps, (rows,))))
    n = blk.mul(xc, blk.broadcast(r, (rows, d), [0]))
    return blk.add(blk.mul(n, blk.broadcast(gamma, (rows, d), [1])),
                   blk.broadcast(beta, (rows, d), [1]))


def np_layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


# --------------------------------------------------------------------------
# 1. Elementwise chain
# --------------------------------------------------------------------------
class Elementwise:
    name = "elementwise"
    title = "gelu(x*a+b)*c"
    function = "gelu_chain"
    grad = None
    tol = 1e-5

    def __init__(self, quick):
        self.n = (1 << 20) if quick else (1 << 24)
        self.desc = f"{self.n // (1 << 20)}M f32"

    def mlir(self):
        f = Function(self.function)
        x = f.arg("x", (self.n,))
        a, b, c = (f.arg(n, ()) for n in "abc")
        blk = f.block
        shape = (self.n,)
        bc = lambda s: blk.broadcast(s, shape, [])
        z = blk.add(blk.mul(x, bc(a)), bc(b))
        z3 = blk.mul(blk.mul(z, z), z)
        inner = blk.scale(blk.add(z, blk.scale(z3, 0.044715)), GELU_C)
        t = blk.add(blk.unary("tanh", inner), blk.constant(1.0, shape))
        g = blk.mul(blk.scale(z, 0.5), t)
        return f.text([blk.mul(g, bc(c))])

    def inputs(self, rng):
        return [rng.standard_normal(self.n, dtype=np.float32),
                np.array(1.5, np.float32), np.array(0.25, np.float32),
                np.array(0.75, np.float32)]

    def reference(self, ins):
        x, a, b, c = (v.astype(np.float64) for v in ins)
        return [gelu_tanh(x * a + b) * c]

    def bytes_moved(self):
        return 8 * self.n  # read x, write y


# --------------------------------------------------------------------------
# 2. GEMM
# --------------------------------------------------------------------------
class Gemm:
    name = "gemm"
    function = "gemm"
    grad = None
    tol = 1e-4

    def __init__(self, n):
        self.n = n
        self.title = f"GEMM {n}^3"
        self.name = f"gemm{n}"
        self.desc = f"{n}x{n}x{n} f32"

    def mlir(self):
        f = Function(self.function)
        a = f.arg("a", (self.n, self.n))
        b = f.arg("b", (self.n, self.n))
        return f.text([f.block.matmul(a, b)])

    def inputs(self, rng):
        return [rng.standard_normal((self.n, self.n), dtype=np.float32)
                for _ in range(2)]

    def reference(self, ins):
        return [ins[0].astype(np.float64) @ ins[1].astype(np.float64)]

    def flops(self):
        return 2.0 * self.n ** 3


# --------------------------------------------------------------------------
# 3. MLP training step
# --------------------------------------------------------------------------
class MlpTrain:
    name = "mlp_train"
    title = "MLP train step"
    function = "train_step"
    tol = 2e-3
    # Compiled with --autocast=bf16 too, and checked against reference(ins,
    # autocast=True). That reference rounds every product's operands to bf16
    # as kiln-autocast does: against the plain float64 one, the mixed-
    # precision gradients differ by up to 16% of their largest magnitude
    # (of w1's; ReLUs whose input is near 0 switch), which says nothing
    # about whether the products were computed right.
    autocast = True
    lr = 0.1

    def __init__(self, quick):
        self.batch, self.dims = (32, [64, 128, 128, 10]) if quick else \
            (256, [784, 1024, 1024, 10])
        self.desc = f"batch {self.batch}, {'-'.join(map(str, self.dims))}, SGD"
        self.grad = ("mlp_loss", "value-and-grad=true wrt=0,1,2,3,4,5")

    def mlir(self):
        f = Function("mlp_loss")
        d = self.dims
        params = []
        for i in range(3):
            params.append(f.arg(f"w{i + 1}", (d[i], d[i + 1])))
            params.append(f.arg(f"b{i + 1}", (d[i + 1],)))
        x = f.arg("x", (self.batch, d[0]))
        labels = f.arg("labels", (self.batch,), "i32")
        blk = f.block
        h = x
        for i in range(3):
            w, b = params[2 * i], params[2 * i + 1]
            shape = (self.batch, d[i + 1])
            h = blk.add(blk.matmul(h, w), blk.broadcast(b, shape, [1]))
            if i < 2:
                h = blk.unary("relu", h)
        shape = (self.batch, d[3])
        m = blk.reduce("max", h, [1])
        zc = blk.sub(h, blk.broadcast(m, shape, [0]))
        lse = blk.unary("log", blk.reduce("sum", blk.unary("exp", zc), [1]))
        logp = blk.sub(zc, blk.broadcast(lse, shape, [0]))
        onehot = blk.cast(blk.compare("eq", blk.iota(1, shape),
                                      blk.broadcast(labels, shape, [0])), "f32")
        loss = blk.unary("neg", blk.reduce("sum", blk.mul(onehot, logp), [0, 1]))
        loss = blk.scale(loss, 1.0 / self.batch)
        return f.text([loss])

    def inputs(self, rng):
        d = self.dims
        ins = []
        for i in range(3):
            ins.append((rng.standard_normal((d[i], d[i + 1])) /
                        math.sqrt(d[i])).astype(np.float32))
            ins.append((0.1 * rng.standard_normal(d[i + 1])).astype(np.float32))
        ins.append(rng.standard_normal((self.batch, d[0]), dtype=np.float32))
        ins.append(rng.integers(0, d[3], self.batch).astype(np.int32))
        return ins

    def reference(self, ins, autocast=False):
        p = [v.astype(np.float64) for v in ins[:6]]
        x = ins[6].astype(np.float64)
        labels = ins[7]
        narrow = round_to_bf16 if autocast else (lambda v: v)

        def mm(a, b):
            return narrow(a) @ narrow(b)
        a1 = mm(x, p[0]) + p[1]
        h1 = np.maximum(a1, 0)
        a2 = mm(h1, p[2]) + p[3]
        h2 = np.maximum(a2, 0)
        z = mm(h2, p[4]) + p[5]
        z = z - z.max(1, keepdims=True)
        e = np.exp(z)
        prob = e / e.sum(1, keepdims=True)
        rows = np.arange(self.batch)
        loss = -np.mean(np.log(prob[rows, labels]))
        dz = prob.copy()
        dz[rows, labels] -= 1
        dz /= self.batch
        g = [None] * 6
        g[4], g[5] = mm(h2.T, dz), dz.sum(0)
        da2 = mm(dz, p[4].T) * (a2 > 0)
        g[2], g[3] = mm(h1.T, da2), da2.sum(0)
        da1 = mm(da2, p[2].T) * (a1 > 0)
        g[0], g[1] = mm(x.T, da1), da1.sum(0)
        return [np.array(loss)] + [pi - self.lr * gi for pi, gi in zip(p, g)]

    def check(self, outputs, expected, ins):
        """Loss, and the gradients recovered from the updated parameters."""
        if len(outputs) != 7:
            return float("inf"), False
        got = [outputs[0]] + [(ins[i].astype(np.float64) - outputs[i + 1]) / self.lr
                              for i in range(6)]
        want = [expected[0]] + [(ins[i].astype(np.float64) - expected[i + 1]) / self.lr
                                for i in range(6)]
        return check_all(got, want, self.tol)


def sgd_train_step(text, grad_fn, lr):
    """Turns @<loss>_value_and_grad(params..., data...) -> (loss, dparams...)
    printed by kiln-opt into @train_step(...) -> (loss, params - lr*dparams),
    keeping only that function."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines)
                 if l.lstrip().startswith(f"func.func @{grad_fn}("))
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == indent + "}")
    header = lines[start]
    args = [a.split(":")[0].strip() for a in
            header[header.index("(") + 1:header.index(") ->")].split(", ")]
    ret = lines[end - 1].strip()
    assert ret.startswith("return "), ret
    names, types = ret[len("return "):].split(" : ")
    names = [n.strip() for n in names.split(",")]
    types = [t.strip() for t in types.split(", ")]
    body = lines[start + 1:end - 1]
    new_names = [names[0]]
    for k, (grad, ty) in enumerate(zip(names[1:], types[1:])):
        body += [f"{indent}  %sgd_lr{k} = kiln.constant dense<{lr:.9e}> : {ty}",
                 f"{indent}  %sgd_step{k} = kiln.mul {grad}, %sgd_lr{k} : {ty}",
                 f"{indent}  %sgd_new{k} = kiln.sub {args[k]}, %sgd_step{k} : {ty}"]
        new_names.append(f"%sgd_new{k}")
    body.append(f"{indent}  return {', '.join(new_names)} : {', '.join(types)}")
    header = header.replace(f"@{grad_fn}(", "@train_step(")
    return "\n".join(["module {", header] + body + [indent + "}", "}", ""])


def only_function(text, fn):
    """Keeps only func.func @fn of a module printed by kiln-opt."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines)
                 if l.lstrip().startswith(f"func.func @{fn}("))
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == indent + "}")
    return "\n".join(["module {"] + lines[start:end + 1] + ["}", ""])


# --------------------------------------------------------------------------
# 4. Transformer encoder layer
# --------------------------------------------------------------------------
class Transformer:
    name = "transformer"
    title = "Transformer encoder layer fwd"
    function = "encoder_layer"
    grad = None
    tol = 1e-3

    def __init__(self, quick):
        self.b, self.s, self.d, self.h, self.f = (2, 32, 64, 4, 128) if quick else \
            (8, 128, 256, 4, 1024)
        self.desc = (f"batch {self.b}, seq {self.s}, d {self.d}, {self.h} heads, "
                     f"FFN {self.f}, post-LN, ReLU")

    PARAMS = ["wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "g1", "be1",
              "w1", "b1", "w2", "b2", "g2", "be2"]

    def param_shapes(self):
        d, f = self.d, self.f
        return {"wq": (d, d), "bq": (d,), "wk": (d, d), "bk": (d,),
                "wv": (d, d), "bv": (d,), "wo": (d, d), "bo": (d,),
                "g1": (d,), "be1": (d,), "w1": (d, f), "b1": (f,),
                "w2": (f, d), "b2": (d,), "g2": (d,), "be2": (d,)}

    def mlir(self):
        fn = Function(self.function)
        return fn.text([self.layer(fn)])

    def layer(self, fn):
        """Adds x and the parameters to `fn` as its arguments and the layer
        to its body; returns the layer's output [B, S, D]."""
        B, S, D, H, F = self.b, self.s, self.d, self.h, self.f
        hd, rows = D // H, B * S
        x = fn.arg("x", (B, S, D))
        shapes = self.param_shapes()
        p = {n: fn.arg(n, shapes[n]) for n in self.PARAMS}
        blk = fn.block
        x2 = blk.reshape(x, (rows, D))

        def dense(v, w, b):
            n = w.shape[1]
            return blk.add(blk.matmul(v, w), blk.broadcast(b, (v.shape[0], n), [1]))

        def heads(v):  # [rows, D] -> [B*H, S, hd]
            v4 = blk.transpose(blk.reshape(v, (B, S, H, hd)), [0, 2, 1, 3])
            return blk.reshape(v4, (B * H, S, hd))

        q = heads(dense(x2, p["wq"], p["bq"]))
        k = heads(dense(x2, p["wk"], p["bk"]))
        v = heads(dense(x2, p["wv"], p["bv"]))
        scores = blk.scale(blk.matmul(q, blk.transpose(k, [0, 2, 1])),
                           1.0 / math.sqrt(hd))
        sshape = (B * H, S, S)
        m = blk.reduce("max", scores, [2])
        e = blk.unary("exp", blk.sub(scores, blk.broadcast(m, sshape, [0, 1])))
        ssum = blk.reduce("sum", e, [2])
        attn = blk.div(e, blk.broadcast(ssum, sshape, [0, 1]))
        ctx = blk.matmul(attn, v)
        ctx = blk.transpose(blk.reshape(ctx, (B, H, S, hd)), [0, 2, 1, 3])
        ctx = blk.reshape(ctx, (rows, D))
        h1 = layer_norm(blk, blk.add(x2, dense(ctx, p["wo"], p["bo"])), p["g1"], p["be1"])
        ff = dense(blk.unary("relu", dense(h1, p["w1"], p["b1"])), p["w2"], p["b2"])
        y = layer_norm(blk, blk.add(h1, ff), p["g2"], p["be2"])
        return blk.reshape(y, (B, S, D))

    def inputs(self, rng):
        ins = [rng.standard_normal((self.b, self.s, self.d), dtype=np.float32)]
        for n in self.PARAMS:
            shape = self.param_shapes()[n]
            if n.startswith("g"):
                v = 1.0 + 0.1 * rng.standard_normal(shape)
            elif len(shape) == 1:
                v = 0.1 * rng.standard_normal(shape)
            else:
                v = rng.standard_normal(shape) / math.sqrt(shape[0])
            ins.append(v.astype(np.float32))
        return ins

    def reference(self, ins):
        B, S, D, H = self.b, self.s, self.d, self.h
        hd = D // H
        x = ins[0].astype(np.float64)
        p = {n: v.astype(np.float64) for n, v in zip(self.PARAMS, ins[1:])}

        def split(v):
            return v.reshape(B, S, H, hd).transpose(0, 2, 1, 3)

        q, k, v = (split(x @ p["w" + c] + p["b" + c]) for c in "qkv")
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = s / s.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
        h1 = np_layer_norm(x + ctx @ p["wo"] + p["bo"], p["g1"], p["be1"])
        ff = np.maximum(h1 @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]
        return [np_layer_norm(h1 + ff, p["g2"], p["be2"])]


# --------------------------------------------------------------------------
# 5. RNN forward + backward (kiln.for)
# --------------------------------------------------------------------------
class Rnn:
    name = "rnn_grad"
    title = "RNN fwd+bwd (fori_loop)"
    function = "rnn_loss_value_and_grad"
    tol = 2e-3

    def __init__(self, quick):
        self.t, self.hdim, self.batch = (8, 32, 4) if quick else (64, 256, 32)
        self.desc = (f"{self.t} steps, hidden {self.hdim}, batch {self.batch}, "
                     f"tanh cell, d(loss)/d(Wx, Wh, b)")
        self.grad = ("rnn_loss", "value-and-grad=true wrt=0,1,2")

    def mlir(self):
        T, Hd, B = self.t, self.hdim, self.batch
        f = Function("rnn_loss")
        wx = f.arg("wx", (Hd, Hd))
        wh = f.arg("wh", (Hd, Hd))
        b = f.arg("b", (Hd,))
        xs = f.arg("xs", (T, B, Hd))
        h0 = f.arg("h0", (B, Hd))
        blk = f.block
        acc0 = blk.constant(0.0)

        def body(inner, i, h, acc, xs_, wx_, wh_, b_):
            xt = inner.reshape(inner.dynamic_slice(xs_, i, 1), (B, Hd))
            a = inner.add(inner.add(inner.matmul(xt, wx_), inner.matmul(h, wh_)),
                          inner.broadcast(b_, (B, Hd), [1]))
            hn = inner.unary("tanh", a)
            accn = inner.add(acc, inner.reduce("sum", inner.mul(hn, hn), [0, 1]))
            return [hn, accn, xs_, wx_, wh_, b_]

        r = blk.for_loop(T, [h0, acc0, xs, wx, wh, b], body)
        return f.text([blk.scale(r[1], 1.0 / (T * B * Hd))])

    def inputs(self, rng):
        Hd = self.hdim
        return [(rng.standard_normal((Hd, Hd)) / math.sqrt(Hd)).astype(np.float32),
                (rng.standard_normal((Hd, Hd)) / math.sqrt(Hd)).astype(np.float32),
                (0.1 * rng.standard_normal(Hd)).astype(np.float32),
                rng.standard_normal((self.t, self.batch, Hd), dtype=np.float32),
                rng.standard_normal((self.batch, Hd), dtype=np.float32)]

    def reference(self, ins):
        wx, wh, b, xs, h0 = (v.astype(np.float64) for v in ins)
        T = self.t
        s = 1.0 / (T * self.batch * self.hdim)
        hs = [h0]
        for t in range(T):
            hs.append(np.tanh(xs[t] @ wx + hs[-1] @ wh + b))
        loss = s * sum(float(np.sum(h * h)) for h in hs[1:])
        dwx, dwh, db = np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
        dh = np.zeros_like(h0)
        for t in range(T, 0, -1):
            dh = dh + 2 * s * hs[t]
            da = dh * (1 - hs[t] ** 2)
            dwx += xs[t - 1].T @ da
            dwh += hs[t - 1].T @ da
            db += da.sum(0)
            dh = da @ wh.T
        return [np.array(loss), dwx, dwh, db]


# --------------------------------------------------------------------------
# 6. Data-dependent while loop
# --------------------------------------------------------------------------
class WhileSolver:
    name = "while_solver"
    title = "while: damped fixed point"
    function = "fixed_point"
    grad = None
    step = 0.01
    tol_residual = 1e-4
    max_iters = 20000

    def __init__(self, quick):
        self.n = 64 if quick else 256
        self.desc = (f"x <- x + {self.step}*(c*cos(x) - x) on {self.n} f32 until "
                     f"max abs(c*cos(x) - x) < {self.tol_residual}")

    def mlir(self):
        n = self.n
        f = Function(self.function)
        x0 = f.arg("x0", (n,))
        c = f.arg("c", (n,))
        blk = f.block
        it0 = blk.constant(0, (), "i32")

        def residual(inner, x, c_):
            r = inner.sub(inner.mul(c_, inner.unary("cos", x)), x)
            return r, inner.reduce("max", inner.unary("abs", r), [0])

        def cond(inner, x, c_, it):
            _, worst = residual(inner, x, c_)
            far = inner.compare("ge", worst, inner.constant(self.tol_residual))
            more = inner.compare("lt", it, inner.constant(self.max_iters, (), "i32"))
            return [inner.select(far, more, far)]

        def body(inner, x, c_, it):
            r, _ = residual(inner, x, c_)
            xn = inner.add(x, inner.scale(r, self.step))
            return [xn, c_, inner.add(it, inner.constant(1, (), "i32"))]

        r = blk.while_loop([x0, c, it0], cond, body)
        return f.text([r[0], r[2]])

    def inputs(self, rng):
        return [rng.uniform(-1.0, 1.0, self.n).astype(np.float32),
                rng.uniform(0.5, 1.5, self.n).astype(np.float32)]

    def reference(self, ins):
        x, c = (v.astype(np.float64) for v in ins)
        it = 0
        while np.max(np.abs(c * np.cos(x) - x)) >= self.tol_residual and it < self.max_iters:
            x = x + self.step * (c * np.cos(x) - x)
            it += 1
        return [x, np.array(it, np.int32)]

    def check(self, outputs, expected, ins):
        """The final iterate, and an iteration count within 2% of float64's
        (the f32 rounding of cos moves the stopping step a little)."""
        if len(outputs) != 2:
            return float("inf"), False
        err = rel_error(outputs[0], expected[0])
        got_it, want_it = int(np.asarray(outputs[1])), int(expected[1])
        ok = err <= 1e-3 and abs(got_it - want_it) <= 0.02 * want_it + 2
        return err, ok


# --------------------------------------------------------------------------
# 8. Convolutions: the distinct 2-d convolutions of ResNet-50
# --------------------------------------------------------------------------
# (label, C, H, O, K, stride, padding): torchvision's ResNet-50 (stride in
# the 3x3 convolution of each stage's first block) on 224x224 images.
RESNET50_CONVS = [
    ("conv1 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3),
    ("1x1 64->64 @56", 64, 56, 64, 1, 1, 0),
    ("3x3 64->64 @56", 64, 56, 64, 3, 1, 1),
    ("1x1 64->256 @56", 64, 56, 256, 1, 1, 0),
    ("1x1 256->64 @56", 256, 56, 64, 1, 1, 0),
    ("1x1 256->128 @56", 256, 56, 128, 1, 1, 0),
    ("3x3/2 128->128 @56", 128, 56, 128, 3, 2, 1),
    ("1x1/2 256->512 @56 (down)", 256, 56, 512, 1, 2, 0),
    ("1x1 128->512 @28", 128, 28, 512, 1, 1, 0),
    ("1x1 512->128 @28", 512, 28, 128, 1, 1, 0),
    ("3x3 128->128 @28", 128, 28, 128, 3, 1, 1),
    ("1x1 512->256 @28", 512, 28, 256, 1, 1, 0),
    ("3x3/2 256->256 @28", 256, 28, 256, 3, 2, 1),
    ("1x1/2 512->1024 @28 (down)", 512, 28, 1024, 1, 2, 0),
    ("1x1 256->1024 @14", 256, 14, 1024, 1, 1, 0),
    ("1x1 1024->256 @14", 1024, 14, 256, 1, 1, 0),
    ("3x3 256->256 @14", 256, 14, 256, 3, 1, 1),
    ("1x1 1024->512 @14", 1024, 14, 512, 1, 1, 0),
    ("3x3/2 512->512 @14", 512, 14, 512, 3, 2, 1),
    ("1x1/2 1024->2048 @14 (down)", 1024, 14, 2048, 1, 2, 0),
    ("1x1 512->2048 @7", 512, 7, 2048, 1, 1, 0),
    ("1x1 2048->512 @7", 2048, 7, 512, 1, 1, 0),
    ("3x3 512->512 @7", 512, 7, 512, 3, 1, 1),
]


class Conv:
    """One f32 kiln.conv, NCHW/OIHW, square images and kernels."""
    function = "conv"
    grad = None
    tol = 1e-4

    def __init__(self, index, batch, label, c, h, o, k, stride, pad):
        self.batch, self.c, self.h, self.o, self.k = batch, c, h, o, k
        self.stride, self.pad = stride, pad
        self.e = (h + 2 * pad - k) // stride + 1
        # `--only conv` picks them all (bench.py strips trailing digits).
        self.name = f"conv{index}"
        self.title = f"conv {label}, batch {batch}"
        self.desc = (f"[{batch},{c},{h},{h}] x [{o},{c},{k},{k}], stride {stride}, "
                     f"padding {pad}, f32")

    def mlir(self):
        n, c, h, o, k, e = self.batch, self.c, self.h, self.o, self.k, self.e
        x, w, y = (f"tensor<{n}x{c}x{h}x{h}xf32>", f"tensor<{o}x{c}x{k}x{k}xf32>",
                   f"tensor<{n}x{o}x{e}x{e}xf32>")
        s, p = self.stride, self.pad
        return (f"func.func @{self.function}(%x: {x}, %w: {w}) -> {y} {{\n"
                f"  %y = kiln.conv %x, %w, strides = [{s}, {s}], "
                f"padding_low = [{p}, {p}], padding_high = [{p}, {p}], "
                f"lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : {x}, {w}\n"
                f"  return %y : {y}\n}}\n")

    def inputs(self, rng):
        x = rng.standard_normal((self.batch, self.c, self.h, self.h), dtype=np.float32)
        w = rng.standard_normal((self.o, self.c, self.k, self.k), dtype=np.float32)
        return [x, (w / math.sqrt(self.c * self.k * self.k)).astype(np.float32)]

    def reference(self, ins):
        x, w = (a.astype(np.float64) for a in ins)
        p, s, k, e = self.pad, self.stride, self.k, self.e
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        out = np.zeros((self.batch, self.o, e, e))
        # One matrix product per kernel offset: no im2col buffer.
        for i in range(k):
            for j in range(k):
                patch = xp[:, :, i:i + s * (e - 1) + 1:s, j:j + s * (e - 1) + 1:s]
                out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j], optimize=True)
        return [out]

    def flops(self):
        return 2.0 * self.batch * self.o * self.e * self.e * self.c * self.k * self.k


def conv_workloads(quick):
    shapes = RESNET50_CONVS[1:3] if quick else RESNET50_CONVS
    batches = (1,) if quick else (1, 8)
    return [Conv(i, b, *shape) for i, (b, shape) in
            enumerate((b, shape) for b in batches for shape in shapes)]


def all_workloads(quick):
    gemm_sizes = (64, 256) if quick else (256, 1024)
    return ([Elementwise(quick)] + [Gemm(n) for n in gemm_sizes] +
            [MlpTrain(quick), Transformer(quick), Rnn(quick), WhileSolver(quick)] +
            conv_workloads(quick))
