#!/usr/bin/env python3
"""Hessian-vector products: forward over reverse against a gradient.

H v = jvp(grad(loss), (w,), (v,))[1] costs, by the usual count, about two
gradients: the forward-mode sweep carries one tangent through the forward
and the backward pass. This script measures that ratio for kiln (kiln.jvp
of kiln.grad, one compiled function) on two losses written once over a
numpy-like namespace, next to reverse over reverse (grad of <grad, v>) and
next to JAX's jvp(grad) on the same functions, all through jit, one thread,
float32:

  mlp  a 3-layer tanh MLP, batch 256, 512-512-512-10, softmax cross entropy,
       H v with respect to every weight (a pytree of 5 arrays)
  rnn  a tanh RNN over 32 steps (lax.scan / kiln.scan), hidden 128,
       H v with respect to the recurrent weight

Each value is the median over rounds of the per-call time of `--calls`
calls; the systems and transforms alternate within each round. Every H v
is checked against the other system's (rtol 1e-3, float32).

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/hvp.py \\
      --markdown bench/results-hvp.md
"""

import argparse
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# One thread for both systems, before either starts a pool.
sys.path.insert(0, HERE)
import machine  # noqa: E402

machine.pin_threads(1)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    machine.add_timing_arguments(p)
    return machine.finish_timing_arguments(p.parse_args())


ARGS = parse_args()
STARTED = datetime.datetime.now(datetime.timezone.utc)

import numpy as np  # noqa: E402

import kiln  # noqa: E402
import kiln.numpy as knp  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
except ImportError:
    jax = None


class Kiln:
    np, nn = knp, kiln.nn
    grad, jvp, jit = (staticmethod(kiln.grad), staticmethod(kiln.jvp),
                      staticmethod(kiln.jit))
    scan = staticmethod(kiln.scan)


if jax is not None:
    class Jax:
        np, nn = jnp, jax.nn
        grad, jvp, jit = (staticmethod(jax.grad), staticmethod(jax.jvp),
                          staticmethod(jax.jit))
        scan = staticmethod(jax.lax.scan)


def mlp_loss(s, params, x, labels):
    h = x
    for i in range(3):
        h = s.np.tanh(h @ params[f"w{i}"] + params[f"b{i}"])
    logp = s.nn.log_softmax(h @ params["out"], axis=-1)
    return -s.np.mean(s.np.sum(logp * labels, axis=-1))


def rnn_loss(s, w, xs):
    def step(h, x):
        h = s.np.tanh(h @ w + x)
        return h, s.np.sum(h * h)
    final, ys = s.scan(step, s.np.zeros(w.shape[0], w.dtype), xs)
    return s.np.sum(ys) * 1e-2 + s.np.sum(final)


def workloads(rng):
    f32 = np.float32
    params = {f"w{i}": (rng.standard_normal((512, 512)) / 24).astype(f32)
              for i in range(3)}
    params.update({f"b{i}": np.zeros(512, f32) for i in range(3)})
    params["out"] = (rng.standard_normal((512, 10)) / 24).astype(f32)
    x = rng.standard_normal((256, 512)).astype(f32)
    labels = np.eye(10, dtype=f32)[rng.integers(0, 10, 256)]
    w = (rng.standard_normal((128, 128)) / 12).astype(f32)
    xs = rng.standard_normal((32, 128)).astype(f32)
    tangent = {k: rng.standard_normal(v.shape).astype(f32)
               for k, v in params.items()}
    return {
        "mlp": (mlp_loss, params, (x, labels), tangent),
        "rnn": (rnn_loss, w, (xs,), rng.standard_normal(w.shape).astype(f32)),
    }


def transforms(s, loss, data):
    """The three jitted functions of (w, v) for system `s`."""
    f = lambda w: loss(s, w, *data)  # noqa: E731

    def vdot(a, b):
        if isinstance(a, dict):
            return sum(s.np.sum(a[k] * b[k]) for k in a)
        return s.np.sum(a * b)

    return {
        "grad": s.jit(lambda w, v: s.grad(f)(w)),
        "hvp": s.jit(lambda w, v: s.jvp(s.grad(f), (w,), (v,))[1]),
        "rev-rev": s.jit(lambda w, v: s.grad(lambda w: vdot(s.grad(f)(w),
                                                            v))(w)),
    }


def leaves(tree):
    return [np.asarray(tree[k]) for k in sorted(tree)] \
        if isinstance(tree, dict) else [np.asarray(tree)]


def main():
    rng = np.random.default_rng(0)
    systems = [("kiln", Kiln)] + ([("JAX", Jax)] if jax is not None else [])
    rows = []
    for name, (loss, w, data, v) in workloads(rng).items():
        fns = {}
        for label, s in systems:
            for kind, fn in transforms(s, loss, data).items():
                fns[(label, kind)] = fn
        # Warm up (compile) and check H v across systems and forms.
        outputs = {key: leaves(machine.block(fn(w, v)))
                   for key, fn in fns.items()}
        reference = outputs[("kiln", "hvp")]
        for key in [("kiln", "rev-rev")] + (
                [("JAX", "hvp")] if jax is not None else []):
            for got, want in zip(outputs[key], reference):
                np.testing.assert_allclose(got, want, rtol=1e-3,
                                           atol=1e-4 * np.abs(want).max())
        times = {key: [] for key in fns}
        for _ in range(ARGS.rounds):
            for key, fn in fns.items():
                start = time.perf_counter()
                for _ in range(ARGS.calls):
                    machine.block(fn(w, v))
                times[key].append((time.perf_counter() - start) / ARGS.calls)
        median = {key: sorted(t)[len(t) // 2] for key, t in times.items()}
        rows.append((name, median))

    lines = ["# Hessian-vector products: forward over reverse", ""]
    lines += machine.measured_lines(STARTED, __file__)
    lines += ["", "One thread, float32, medians of "
              f"{ARGS.rounds} rounds of {ARGS.calls} calls (ms). "
              "hvp = jvp(grad(loss)); rev-rev = grad(<grad(loss), v>).", ""]
    columns = ["workload", "kiln grad", "kiln hvp", "kiln hvp / grad",
               "kiln rev-rev / grad"]
    if jax is not None:
        columns += ["JAX grad", "JAX hvp", "JAX hvp / grad",
                    "kiln hvp / JAX hvp"]
    lines += machine.table_head(columns)
    for name, m in rows:
        g, h = m[("kiln", "grad")], m[("kiln", "hvp")]
        row = (f"| {name} | {g * 1e3:.2f} | {h * 1e3:.2f} | {h / g:.2f} | "
               f"{m[('kiln', 'rev-rev')] / g:.2f} |")
        if jax is not None:
            jg, jh = m[("JAX", "grad")], m[("JAX", "hvp")]
            row += (f" {jg * 1e3:.2f} | {jh * 1e3:.2f} | {jh / jg:.2f} | "
                    f"{h / jh:.2f} |")
        lines.append(row)
    machine.write_report(lines, ARGS.markdown)


if __name__ == "__main__":
    main()
