#!/usr/bin/env python3
"""Per-example gradients: kiln.vmap(kiln.grad(loss)) against the same
computation written by hand with batched ops, and against JAX's
jax.vmap(jax.grad(loss)).

The loss is a 2-layer tanh MLP with softmax cross entropy (784-256-10),
and each example's gradient with respect to every parameter is wanted (as
DP-SGD clips each one before averaging). Three functions, each jitted, one
thread, float32, checked against each other first:

  vmap  kiln.vmap(kiln.grad(loss), in_axes=(None, 0, 0)): the batching
        pass turns the one-example gradient into batched products
  hand  the per-example backward pass written with batched kiln.numpy ops
        (outer products by broadcasting), as one would without vmap
  JAX   jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))

Goals: vmap <= 1.1x hand, vmap <= 1.0x JAX. Each value is the median over
rounds of the per-call time of `--calls` calls, the three alternating, each
round starting with the next one.

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/per_example_grad.py \\
      --markdown bench/results-per-example-grad.md
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
    p.add_argument("--batches", default="32,128",
                   help="batch sizes, comma-separated (default 32,128)")
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


def loss(s, nn, p, x, y):
    """One example: x [1, 784], y [1, 10] one-hot."""
    h = s.tanh(x @ p["w1"] + p["b1"])
    logp = nn.log_softmax(h @ p["w2"] + p["b2"])
    return -s.sum(logp * y)


def hand_batched(p, xs, ys):
    """The per-example gradients of `loss` for xs [B, 1, 784], written with
    batched ops: the backward pass of the batch, with each parameter's
    gradient kept per example (outer products) instead of summed."""
    x = knp.reshape(xs, (xs.shape[0], xs.shape[2]))
    y = knp.reshape(ys, (ys.shape[0], ys.shape[2]))
    h = knp.tanh(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    dlogits = kiln.nn.softmax(logits) - y                       # [B, 10]
    dh = (dlogits @ knp.transpose(p["w2"])) * (1.0 - h * h)     # [B, 256]
    return {
        "w1": x[:, :, None] * dh[:, None, :],
        "b1": dh,
        "w2": h[:, :, None] * dlogits[:, None, :],
        "b2": dlogits,
    }


def params(rng):
    f32 = np.float32
    return {"w1": (rng.standard_normal((784, 256)) / 28).astype(f32),
            "b1": np.zeros(256, f32),
            "w2": (rng.standard_normal((256, 10)) / 16).astype(f32),
            "b2": np.zeros(10, f32)}


def main():
    rng = np.random.default_rng(0)
    p = params(rng)
    fns = {
        "vmap": kiln.jit(kiln.vmap(kiln.grad(
            lambda p, x, y: loss(knp, kiln.nn, p, x, y)),
            in_axes=(None, 0, 0))),
        "hand": kiln.jit(hand_batched),
    }
    if jax is not None:
        fns["JAX"] = jax.jit(jax.vmap(jax.grad(
            lambda p, x, y: loss(jnp, jax.nn, p, x, y)),
            in_axes=(None, 0, 0)))
    rows = []
    for batch in [int(b) for b in ARGS.batches.split(",")]:
        xs = rng.standard_normal((batch, 1, 784)).astype(np.float32)
        ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)][:, None]
        outs = {name: machine.block(fn(p, xs, ys))
                for name, fn in fns.items()}
        for name in outs:
            for key in p:
                np.testing.assert_allclose(
                    np.asarray(outs[name][key]), np.asarray(outs["vmap"][key]),
                    rtol=1e-3, atol=1e-5, err_msg=f"{name} {key}")
        times = {name: [] for name in fns}
        names = list(fns)
        for r in range(ARGS.rounds):
            # Each round starts with another system, so none always runs
            # right after JAX's thread pool or in its cache footprint.
            for name in names[r % len(names):] + names[:r % len(names)]:
                fn = fns[name]
                start = time.perf_counter()
                for _ in range(ARGS.calls):
                    machine.block(fn(p, xs, ys))
                times[name].append((time.perf_counter() - start) / ARGS.calls)
        rows.append((batch, {n: sorted(t)[len(t) // 2]
                             for n, t in times.items()}))

    lines = ["# Per-example gradients: vmap(grad) against hand-batched and "
             "JAX", ""]
    lines += machine.measured_lines(STARTED, __file__)
    lines += ["", "2-layer tanh MLP (784-256-10), softmax cross entropy, "
              "every parameter's gradient per example; one thread, "
              f"float32, medians of {ARGS.rounds} rounds of {ARGS.calls} "
              "calls (ms). Goals: vmap/hand <= 1.1, vmap/JAX <= 1.0.", ""]
    columns = ["batch", "kiln vmap(grad)", "hand-batched", "vmap / hand"]
    if jax is not None:
        columns += ["JAX vmap(grad)", "vmap / JAX"]
    lines += machine.table_head(columns)
    for batch, m in rows:
        row = (f"| {batch} | {m['vmap'] * 1e3:.2f} | {m['hand'] * 1e3:.2f} "
               f"| {m['vmap'] / m['hand']:.2f} |")
        if jax is not None:
            row += f" {m['JAX'] * 1e3:.2f} | {m['vmap'] / m['JAX']:.2f} |"
        lines.append(row)
    machine.write_report(lines, ARGS.markdown)


if __name__ == "__main__":
    main()
