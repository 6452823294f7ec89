"""The comparison systems (anchors): PyTorch eager, torch.compile, JAX (XLA
CPU) and ONNX Runtime, each implementing every workload of workloads.py on
the same numpy inputs.

Each anchor class has `available()` (None, or why it is absent) and
`prepare(workload, inputs)`, which returns a zero-argument callable that runs
the workload once and returns numpy outputs (in the kiln function's output
order), or raises Unsupported with the reason. Gradients are taken with each
system's own autodiff (torch.autograd, jax.value_and_grad); ONNX Runtime has
no autodiff in its inference package, so its MLP and RNN graphs carry
hand-written backward passes (the same derivation as the numpy reference).
"""

import math
import time

import numpy as np

import workloads as W


class Unsupported(Exception):
    pass


def time_callable(fn, repeat, warmup=2):
    """(median, min) seconds of `repeat` calls after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), float(np.min(times))


# --------------------------------------------------------------------------
# PyTorch (eager and torch.compile)
# --------------------------------------------------------------------------
class Torch:
    def __init__(self, threads, compiled, device="cpu"):
        self.threads = threads
        self.compiled = compiled
        self.device = device
        self.name = "torch.compile" if compiled else "PyTorch eager"
        self.torch = None

    def available(self):
        try:
            import torch
        except Exception as exc:  # noqa: BLE001 - any import failure means absent
            return f"not installed ({type(exc).__name__})"
        if self.compiled and not hasattr(torch, "compile"):
            return f"torch {torch.__version__} has no torch.compile"
        if self.device == "cuda" and not torch.cuda.is_available():
            return f"torch {torch.__version__} sees no CUDA device"
        torch.set_num_threads(self.threads)
        self.torch = torch
        return None

    def version(self):
        return f"torch {self.torch.__version__}"

    def _wrap(self, fn):
        return self.torch.compile(fn) if self.compiled else fn

    def prepare(self, wl, ins):
        t = [self.torch.from_numpy(np.ascontiguousarray(v)).to(self.device) for v in ins]
        run = self.on_device(wl, t)
        return lambda: [np.asarray(o.cpu()) for o in run()]

    def prepare_copying(self, wl, ins):
        """Like prepare, but each call first copies every input from host
        memory into the tensors the workload reads, as a compiled module's
        call does when its caller holds numpy arrays."""
        host = [self.torch.from_numpy(np.ascontiguousarray(v)) for v in ins]
        t = [h.to(self.device) for h in host]
        run = self.on_device(wl, t)

        def call():
            for dst, src in zip(t, host):
                dst.copy_(src)
            return [np.asarray(o.cpu()) for o in run()]
        return call

    def transformer_layer(self, wl):
        """layer(x, params by name) of workloads.Transformer in PyTorch."""
        torch = self.torch
        F = torch.nn.functional
        B, S, D, H = wl.b, wl.s, wl.d, wl.h
        hd = D // H

        def layer(x, p):
            def split(v):
                return v.reshape(B, S, H, hd).transpose(1, 2)
            q, k, v = (split(x @ p["w" + c] + p["b" + c]) for c in "qkv")
            a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd), dim=-1)
            ctx = (a @ v).transpose(1, 2).reshape(B, S, D)
            h1 = F.layer_norm(x + ctx @ p["wo"] + p["bo"], (D,), p["g1"], p["be1"])
            ff = torch.relu(h1 @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
            return F.layer_norm(h1 + ff, (D,), p["g2"], p["be2"])
        return layer

    def on_device(self, wl, t):
        """A zero-argument callable running the workload on the tensors t
        (on self.device) and returning its outputs as tensors there."""
        torch = self.torch
        F = torch.nn.functional

        def gelu_tanh(z):
            return 0.5 * z * (1.0 + torch.tanh(W.GELU_C * (z + 0.044715 * z * z * z)))

        if isinstance(wl, W.Elementwise):
            f = self._wrap(lambda x, a, b, c: gelu_tanh(x * a + b) * c)
            return lambda: [f(*t)]
        if isinstance(wl, W.Gemm):
            f = self._wrap(torch.matmul)
            return lambda: [f(t[0], t[1])]
        if isinstance(wl, W.MlpTrain):
            labels = t[7].long()

            def loss_fn(w1, b1, w2, b2, w3, b3, x, y):
                h = torch.relu(x @ w1 + b1)
                h = torch.relu(h @ w2 + b2)
                return F.cross_entropy(h @ w3 + b3, y)

            loss_c = self._wrap(loss_fn)

            def step():
                params = [p.detach().requires_grad_(True) for p in t[:6]]
                loss = loss_c(*params, t[6], labels)
                grads = torch.autograd.grad(loss, params)
                with torch.no_grad():
                    new = [p - wl.lr * g for p, g in zip(params, grads)]
                return [loss.detach()] + new
            return step
        if isinstance(wl, W.Transformer):
            p = dict(zip(wl.PARAMS, t[1:]))
            f = self._wrap(self.transformer_layer(wl))

            def run():
                with torch.no_grad():
                    return [f(t[0], p)]
            return run
        if isinstance(wl, W.Rnn):
            T = wl.t
            scale = 1.0 / (T * wl.batch * wl.hdim)

            def loss_fn(wx, wh, b, xs, h0):
                h, acc = h0, 0.0
                for i in range(T):
                    h = torch.tanh(xs[i] @ wx + h @ wh + b)
                    acc = acc + (h * h).sum()
                return acc * scale

            loss_c = self._wrap(loss_fn)

            def step():
                params = [v.detach().requires_grad_(True) for v in t[:3]]
                loss = loss_c(*params, t[3], t[4])
                grads = torch.autograd.grad(loss, params)
                return [loss.detach()] + list(grads)
            return step
        if isinstance(wl, W.WhileSolver):
            def residual(x, c):
                return c * torch.cos(x) - x

            res_c = self._wrap(lambda x, c: torch.max(torch.abs(residual(x, c))))
            upd_c = self._wrap(lambda x, c: x + wl.step * residual(x, c))

            def run():
                x, c, it = t[0], t[1], 0
                while float(res_c(x, c)) >= wl.tol_residual and it < wl.max_iters:
                    x = upd_c(x, c)
                    it += 1
                return [x, torch.tensor(it, dtype=torch.int32)]
            return run
        raise Unsupported("no implementation")


# --------------------------------------------------------------------------
# JAX (XLA CPU)
# --------------------------------------------------------------------------
class Jax:
    name = "JAX/XLA"

    def __init__(self, threads, platform="cpu"):
        self.threads = threads
        self.platform = platform
        self.jax = None

    def available(self):
        try:
            import jax
            jax.config.update("jax_platforms", self.platform)
            import jax.numpy  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__})"
        self.jax = jax
        return None

    def version(self):
        import jaxlib
        return f"jax {self.jax.__version__} (jaxlib {jaxlib.__version__})"

    def function(self, wl):
        """The jitted function of a workload and its argument transform."""
        jax = self.jax
        jnp = jax.numpy
        lax = jax.lax

        def gelu_tanh(z):
            return 0.5 * z * (1.0 + jnp.tanh(W.GELU_C * (z + 0.044715 * z * z * z)))

        if isinstance(wl, W.Elementwise):
            return jax.jit(lambda x, a, b, c: (gelu_tanh(x * a + b) * c,))
        if isinstance(wl, W.Gemm):
            return jax.jit(lambda a, b: (a @ b,))
        if isinstance(wl, W.MlpTrain):
            def loss_fn(params, x, y):
                w1, b1, w2, b2, w3, b3 = params
                h = jax.nn.relu(x @ w1 + b1)
                h = jax.nn.relu(h @ w2 + b2)
                logp = jax.nn.log_softmax(h @ w3 + b3, axis=1)
                return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

            def step(w1, b1, w2, b2, w3, b3, x, y):
                params = (w1, b1, w2, b2, w3, b3)
                loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
                return (loss,) + tuple(p - wl.lr * g for p, g in zip(params, grads))
            return jax.jit(step)
        if isinstance(wl, W.Transformer):
            B, S, D, H = wl.b, wl.s, wl.d, wl.h
            hd = D // H

            def ln(v, g, b):
                m = v.mean(-1, keepdims=True)
                var = ((v - m) ** 2).mean(-1, keepdims=True)
                return (v - m) * lax.rsqrt(var + 1e-5) * g + b

            def layer(x, *ps):
                p = dict(zip(wl.PARAMS, ps))

                def split(v):
                    return v.reshape(B, S, H, hd).transpose(0, 2, 1, 3)
                q, k, v = (split(x @ p["w" + c] + p["b" + c]) for c in "qkv")
                a = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd), axis=-1)
                ctx = (a @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
                h1 = ln(x + ctx @ p["wo"] + p["bo"], p["g1"], p["be1"])
                ff = jax.nn.relu(h1 @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
                return (ln(h1 + ff, p["g2"], p["be2"]),)
            return jax.jit(layer)
        if isinstance(wl, W.Rnn):
            T = wl.t
            scale = 1.0 / (T * wl.batch * wl.hdim)

            def loss_fn(params, xs, h0):
                wx, wh, b = params

                def body(i, carry):
                    h, acc = carry
                    h = jnp.tanh(xs[i] @ wx + h @ wh + b)
                    return h, acc + jnp.sum(h * h)
                _, acc = lax.fori_loop(0, T, body, (h0, jnp.float32(0)))
                return acc * scale

            def step(wx, wh, b, xs, h0):
                loss, grads = jax.value_and_grad(loss_fn)((wx, wh, b), xs, h0)
                return (loss,) + tuple(grads)
            return jax.jit(step)
        if isinstance(wl, W.WhileSolver):
            def solve(x0, c):
                def residual(x):
                    return c * jnp.cos(x) - x

                def cond(s):
                    x, it = s
                    return (jnp.max(jnp.abs(residual(x))) >= wl.tol_residual) & \
                        (it < wl.max_iters)

                def body(s):
                    x, it = s
                    return x + wl.step * residual(x), it + 1
                return lax.while_loop(cond, body, (x0, jnp.int32(0)))
            return jax.jit(solve)
        raise Unsupported("no implementation")

    def prepare(self, wl, ins):
        f = self.function(wl)
        args = [self.jax.device_put(v) for v in ins]

        def run():
            outs = f(*args)
            self.jax.block_until_ready(outs)
            return [np.asarray(o) for o in outs]
        return run

    def compile_seconds(self, wl, ins):
        """Trace, lower and compile on the first call, as a user sees it."""
        f = self.function(wl)
        start, cpu = time.perf_counter(), time.process_time()
        f.lower(*ins).compile()
        return time.perf_counter() - start, time.process_time() - cpu


# --------------------------------------------------------------------------
# ONNX Runtime
# --------------------------------------------------------------------------
class OnnxGraph:
    """A few helpers over onnx.helper for writing graphs like numpy code."""

    def __init__(self, onnx):
        self.onnx = onnx
        self.h = onnx.helper
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"t{self.count}"

    def inp(self, name, array):
        elem = self.onnx.helper.np_dtype_to_tensor_dtype(array.dtype)
        self.inputs.append(self.h.make_tensor_value_info(name, elem, list(array.shape)))
        return name

    def const(self, value, dtype=np.float32):
        name = self.fresh()
        self.inits.append(self.onnx.numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def op(self, kind, *ins, **attrs):
        out = self.fresh()
        self.nodes.append(self.h.make_node(kind, list(ins), [out], **attrs))
        return out

    def model(self, outs, out_arrays):
        elem = self.onnx.helper.np_dtype_to_tensor_dtype
        self.outputs = [self.h.make_tensor_value_info(n, elem(a.dtype), list(a.shape))
                        for n, a in zip(outs, out_arrays)]
        graph = self.h.make_graph(self.nodes, "bench", self.inputs, self.outputs,
                                  initializer=self.inits)
        model = self.h.make_model(graph, opset_imports=[self.h.make_opsetid("", 17)])
        model.ir_version = 8
        self.onnx.checker.check_model(model)
        return model


class Ort:
    name = "ONNX Runtime"

    def __init__(self, threads):
        self.threads = threads

    def available(self):
        try:
            import onnx
            import onnxruntime
        except Exception as exc:  # noqa: BLE001
            return f"not installed ({type(exc).__name__})"
        self.onnx, self.ort = onnx, onnxruntime
        return None

    def version(self):
        return f"onnxruntime {self.ort.__version__} (onnx {self.onnx.__version__})"

    def prepare(self, wl, ins):
        g = OnnxGraph(self.onnx)
        names = [f"in{i}" for i in range(len(ins))]
        for n, v in zip(names, ins):
            g.inp(n, v)
        outs = self.build(g, wl, names, ins)
        expected_shapes = [np.asarray(r, dtype=np.float32 if np.asarray(r).dtype.kind == "f"
                                      else np.asarray(r).dtype)
                           for r in wl.reference(ins)]
        model = g.model(outs, expected_shapes)
        so = self.ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        sess = self.ort.InferenceSession(model.SerializeToString(), so,
                                         providers=["CPUExecutionProvider"])
        feed = dict(zip(names, ins))
        return lambda: sess.run(None, feed)

    def build(self, g, wl, n, ins):
        op, c = g.op, g.const
        mm = lambda a, b: op("MatMul", a, b)
        add = lambda a, b: op("Add", a, b)
        mul = lambda a, b: op("Mul", a, b)
        sub = lambda a, b: op("Sub", a, b)
        tr = lambda a, perm=None: op("Transpose", a, perm=perm) if perm else op("Transpose", a)
        rsum = lambda a, axes, keep=0: op("ReduceSum", a, c(axes, np.int64), keepdims=keep)

        if isinstance(wl, W.Elementwise):
            z = add(mul(n[0], n[1]), n[2])
            z3 = mul(mul(z, z), z)
            inner = mul(add(z, mul(z3, c(0.044715))), c(W.GELU_C))
            gl = mul(mul(z, c(0.5)), add(op("Tanh", inner), c(1.0)))
            return [mul(gl, n[3])]
        if isinstance(wl, W.Gemm):
            return [mm(n[0], n[1])]
        if isinstance(wl, W.MlpTrain):
            Bt = wl.batch
            w1, b1, w2, b2, w3, b3, x, y = n
            a1 = add(mm(x, w1), b1)
            h1 = op("Relu", a1)
            a2 = add(mm(h1, w2), b2)
            h2 = op("Relu", a2)
            z = add(mm(h2, w3), b3)
            onehot = op("OneHot", op("Cast", y, to=self.onnx.TensorProto.INT64),
                        c(wl.dims[3], np.int64), c([0.0, 1.0]), axis=-1)
            logp = op("LogSoftmax", z, axis=1)
            loss = mul(rsum(mul(onehot, logp), [0, 1]), c(-1.0 / Bt))
            dz = mul(sub(op("Softmax", z, axis=1), onehot), c(1.0 / Bt))
            relu_grad = lambda d, a: op("Where", op("Greater", a, c(0.0)), d, c(0.0))
            g3, gb3 = mm(tr(h2), dz), rsum(dz, [0])
            da2 = relu_grad(mm(dz, tr(w3)), a2)
            g2, gb2 = mm(tr(h1), da2), rsum(da2, [0])
            da1 = relu_grad(mm(da2, tr(w2)), a1)
            g1, gb1 = mm(tr(x), da1), rsum(da1, [0])
            lr = c(wl.lr)
            return [loss] + [sub(p, mul(gr, lr)) for p, gr in
                             zip([w1, b1, w2, b2, w3, b3], [g1, gb1, g2, gb2, g3, gb3])]
        if isinstance(wl, W.Transformer):
            B, S, D, H = wl.b, wl.s, wl.d, wl.h
            hd = D // H
            x = n[0]
            p = dict(zip(wl.PARAMS, n[1:]))

            def split(v):
                return tr(op("Reshape", v, c([B, S, H, hd], np.int64)), [0, 2, 1, 3])
            q, k, v = (split(add(mm(x, p["w" + ch]), p["b" + ch])) for ch in "qkv")
            s = mul(mm(q, tr(k, [0, 1, 3, 2])), c(1.0 / math.sqrt(hd)))
            a = op("Softmax", s, axis=-1)
            ctx = op("Reshape", tr(mm(a, v), [0, 2, 1, 3]), c([B, S, D], np.int64))
            ln = lambda v_, gg, bb: op("LayerNormalization", v_, gg, bb, axis=-1, epsilon=1e-5)
            h1 = ln(add(x, add(mm(ctx, p["wo"]), p["bo"])), p["g1"], p["be1"])
            ff = add(mm(op("Relu", add(mm(h1, p["w1"]), p["b1"])), p["w2"]), p["b2"])
            return [ln(add(h1, ff), p["g2"], p["be2"])]
        if isinstance(wl, W.Rnn):
            # Unrolled forward, then the hand-derived backward through time.
            T = wl.t
            wx, wh, b, xs, h0 = n
            s = 1.0 / (T * wl.batch * wl.hdim)
            xt = [op("Gather", xs, c(t, np.int64), axis=0) for t in range(T)]
            hs = [h0]
            acc = None
            for t in range(T):
                h = op("Tanh", add(add(mm(xt[t], wx), mm(hs[-1], wh)), b))
                hs.append(h)
                sq = rsum(mul(h, h), [0, 1])
                acc = sq if acc is None else add(acc, sq)
            loss = mul(acc, c(s))
            dh, dwx, dwh, db = None, None, None, None
            whT = tr(wh)
            for t in range(T, 0, -1):
                local = mul(hs[t], c(2 * s))
                dh = local if dh is None else add(dh, local)
                da = mul(dh, sub(c(1.0), mul(hs[t], hs[t])))
                terms = (mm(tr(xt[t - 1]), da), mm(tr(hs[t - 1]), da), rsum(da, [0]))
                dwx = terms[0] if dwx is None else add(dwx, terms[0])
                dwh = terms[1] if dwh is None else add(dwh, terms[1])
                db = terms[2] if db is None else add(db, terms[2])
                dh = mm(da, whT)
            return [loss, dwx, dwh, db]
        if isinstance(wl, W.WhileSolver):
            h = self.onnx.helper
            x0, cvec = n

            def residual_max(graph, x):
                r = graph.op("Sub", graph.op("Mul", cvec, graph.op("Cos", x)), x)
                return r, graph.op("ReduceMax", graph.op("Abs", r), axes=[0], keepdims=0)

            def go(graph, worst, it):
                far = graph.op("GreaterOrEqual", worst, graph.const(wl.tol_residual))
                more = graph.op("Less", it, graph.const(wl.max_iters, np.int32))
                return graph.op("And", far, more)

            body = OnnxGraph(self.onnx)
            body.count = 10000  # names distinct from the outer graph's
            tf = self.onnx.TensorProto
            body_in = [h.make_tensor_value_info("iter", tf.INT64, []),
                       h.make_tensor_value_info("cond_in", tf.BOOL, []),
                       h.make_tensor_value_info("x", tf.FLOAT, [wl.n]),
                       h.make_tensor_value_info("it", tf.INT32, [])]
            r, _ = residual_max(body, "x")
            xn = body.op("Add", "x", body.op("Mul", r, body.const(wl.step)))
            itn = body.op("Add", "it", body.const(1, np.int32))
            _, worst_n = residual_max(body, xn)
            cond_out = go(body, worst_n, itn)
            body_out = [h.make_tensor_value_info(cond_out, tf.BOOL, []),
                        h.make_tensor_value_info(xn, tf.FLOAT, [wl.n]),
                        h.make_tensor_value_info(itn, tf.INT32, [])]
            body_graph = h.make_graph(body.nodes, "body", body_in, body_out,
                                      initializer=body.inits)
            it0 = c(0, np.int32)
            _, worst0 = residual_max(g, x0)
            cond0 = go(g, worst0, it0)
            xo, ito = g.fresh(), g.fresh()
            g.nodes.append(h.make_node("Loop", ["", cond0, x0, it0], [xo, ito],
                                       body=body_graph))
            return [xo, ito]
        raise Unsupported("no implementation")
