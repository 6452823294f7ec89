"""An Elman RNN written with kiln.scan and trained with kiln.grad through it.

What it shows: the recurrence h_t = tanh(x_t Wx + h_{t-1} Wh + b) is one
kiln.scan over the time axis (the carry is the hidden state, the stacked
outputs are every h_t); kiln.value_and_grad differentiates the loss
through the scan (backpropagation through time, derived by kiln's autodiff
pass), and an Adam step -- gradient, moment updates and parameter update
with kiln.tree_map over the parameter dict, the optimizer state a pytree
(params, m, v, t) going in and out -- is one kiln.jit function.

The task has a known answer: the inputs are random +-1 sequences of length
16 and the target at step t is 0.1 times the running sum x_1 + ... + x_t,
which an RNN can represent (it has to count). Two checks:

  * training: after 1000 Adam steps on fresh batches of 32, the mean
    squared error on a fixed held-out batch of 256 must be at least
    LOSS_DROP = 100 times below its initial value and 100 times below the
    error of always predicting 0 (about 0.09);
  * gradient: on one batch of 8, at the initial and at the trained
    parameters, the gradient kiln computes through the scan is compared
    with float64 central finite differences of a separate numpy
    implementation of the same RNN (plain Python loop over time), for
    every parameter entry. The relative error ||g_kiln - g_fd|| / ||g_fd||
    must be below 1e-7 with kiln in float64, and with kiln in float32
    below 1e-4 at the initial parameters and 1e-3 at the trained ones:
    float32 rounding leaves an absolute error of ~1e-7 either way, and the
    gradient near the trained minimum is some 100s of times smaller.

Run (from a build tree):

    PYTHONPATH=build/python /usr/bin/python3 examples/python/rnn_scan.py \
        [--steps 1000] [--lr 0.003] [--seed 0]

Exits 1 if a check fails.
"""

import argparse
import sys
import time

import numpy as np

import kiln
import kiln.numpy as knp

T, HIDDEN, BATCH = 16, 16, 32
LOSS_DROP = 100.0           # held-out loss must fall by at least this factor
GRAD_TOL_F32 = 1e-4         # relative error bounds of the scan gradient
GRAD_TOL_F32_TRAINED = 1e-3
GRAD_TOL_F64 = 1e-7
FD_EPS = 1e-6               # step of the central differences (float64)


def make_batch(rng, n, dtype=np.float32):
    """Time-major inputs [T, n, 1] of +-1 and targets 0.1 * running sum."""
    xs = rng.choice([-1.0, 1.0], size=(T, n, 1))
    return xs.astype(dtype), (0.1 * np.cumsum(xs, axis=0)).astype(dtype)


def initial_parameters(rng, dtype=np.float32):
    p = {"wx": rng.normal(0.0, 1.0, (1, HIDDEN)),
         "wh": rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (HIDDEN, HIDDEN)),
         "b": np.zeros(HIDDEN),
         "wo": rng.normal(0.0, 1.0 / np.sqrt(HIDDEN), (HIDDEN, 1)),
         "bo": np.zeros(1)}
    return {k: v.astype(dtype) for k, v in p.items()}


# --- The model in kiln ----------------------------------------------------------

def rnn_outputs(params, xs):
    """The prediction at every step, [T, batch, 1]."""
    def cell(h, x):
        h = knp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h                         # new carry, output of this step
    h0 = knp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    _, hs = kiln.scan(cell, h0, xs)         # hs: [T, batch, HIDDEN]
    return hs @ params["wo"] + params["bo"]


def loss(params, xs, targets):
    return knp.mean((rnn_outputs(params, xs) - targets) ** 2)


def make_step(lr, b1=0.9, b2=0.999, eps=1e-8):
    @kiln.jit
    def train_step(state, xs, targets):
        params, m, v, t = state
        value, grads = kiln.value_and_grad(loss)(params, xs, targets)
        t = t + 1.0
        m = kiln.tree_map(lambda mi, g: b1 * mi + (1 - b1) * g, m, grads)
        v = kiln.tree_map(lambda vi, g: b2 * vi + (1 - b2) * g * g, v, grads)
        c1, c2 = 1 - b1 ** t, 1 - b2 ** t      # bias corrections
        params = kiln.tree_map(
            lambda p, mi, vi: p - lr * (mi / c1) / (knp.sqrt(vi / c2) + eps),
            params, m, v)
        return value, (params, m, v, t)
    return train_step


evaluate = kiln.jit(loss)
gradient = kiln.jit(kiln.grad(loss))


# --- The same RNN in numpy (float64), for the finite differences ----------------

def numpy_loss(params, xs, targets):
    h = np.zeros((xs.shape[1], HIDDEN))
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ params["wx"] + h @ params["wh"] + params["b"])
        out = h @ params["wo"] + params["bo"]
        total += np.sum((out - targets[t]) ** 2)
    return total / targets.size


def finite_difference_gradient(params, xs, targets):
    params = {k: v.astype(np.float64) for k, v in params.items()}
    xs, targets = xs.astype(np.float64), targets.astype(np.float64)
    grads = {}
    for name, value in params.items():
        g = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            saved = value[index]
            value[index] = saved + FD_EPS
            up = numpy_loss(params, xs, targets)
            value[index] = saved - FD_EPS
            down = numpy_loss(params, xs, targets)
            value[index] = saved
            g[index] = (up - down) / (2 * FD_EPS)
        grads[name] = g
    return grads


def relative_error(got, want):
    names = sorted(want)
    diff = np.concatenate([(np.asarray(got[k], np.float64) - want[k]).ravel()
                           for k in names])
    ref = np.concatenate([want[k].ravel() for k in names])
    return float(np.linalg.norm(diff) / np.linalg.norm(ref))


def check_gradient(params, xs, targets, tol_f32):
    """kiln's scan gradient against finite differences, in float32 and
    float64; returns True if both are within their bounds."""
    reference = finite_difference_gradient(params, xs, targets)
    count = sum(g.size for g in reference.values())
    norm = np.sqrt(sum(np.sum(g ** 2) for g in reference.values()))
    print(f"  finite differences: {count} entries, gradient norm {norm:.2e}")
    ok = True
    for dtype, tol in ((np.float32, tol_f32), (np.float64, GRAD_TOL_F64)):
        p = {k: v.astype(dtype) for k, v in params.items()}
        g = gradient(p, xs.astype(dtype), targets.astype(dtype))
        err = relative_error(g, reference)
        worst = max(np.abs(np.asarray(g[k], np.float64) - reference[k]).max()
                    for k in reference)
        good = err < tol
        ok = ok and good
        print(f"  kiln {np.dtype(dtype).name} gradient through the scan vs "
              f"finite differences: relative error "
              f"{err:.2e} (bound {tol:.0e}), max abs error {worst:.2e}  "
              f"{'ok' if good else 'FAIL'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    params = initial_parameters(rng)
    held_out = make_batch(rng, 256)

    print("gradient check at the initial parameters, one batch of 8:")
    ok = check_gradient(params, *make_batch(rng, 8), GRAD_TOL_F32)

    initial = float(evaluate(params, *held_out))
    baseline = float(np.mean(held_out[1] ** 2))     # always predicting 0
    print(f"held-out loss: initial {initial:.6f}, predicting 0 "
          f"{baseline:.6f}")
    train_step = make_step(args.lr)
    zeros = {k: np.zeros_like(v) for k, v in params.items()}
    state = (params, zeros, zeros, np.zeros((), np.float32))  # Adam's state
    start = time.perf_counter()
    for k in range(args.steps):
        value, state = train_step(state, *make_batch(rng, BATCH))
        params = state[0]
        if k % 200 == 0 or k + 1 == args.steps:
            print(f"step {k:4d}  batch loss {float(value):.6f}")
    seconds = time.perf_counter() - start
    final = float(evaluate(params, *held_out))
    print(f"{args.steps} steps in {seconds:.2f} s (compile "
          f"{train_step.last_compile_seconds:.2f} s)")
    print(f"held-out loss: final {final:.6f}, {initial / final:.0f}x below "
          f"the initial loss, {baseline / final:.0f}x below predicting 0")
    xs, targets = held_out
    outputs = kiln.jit(rnn_outputs)(params, xs)
    print("running sum of held-out sequence 0, target vs RNN:")
    print("  target", " ".join(f"{10 * v:5.1f}" for v in targets[:, 0, 0]))
    print("  rnn   ", " ".join(f"{10 * v:5.1f}" for v in outputs[:, 0, 0]))

    if not initial / final >= LOSS_DROP:
        print(f"FAIL: the loss fell by {initial / final:.1f}x, less than "
              f"{LOSS_DROP:.0f}x", file=sys.stderr)
        ok = False
    if not baseline / final >= LOSS_DROP:
        print(f"FAIL: the final loss is not {LOSS_DROP:.0f}x below "
              "predicting 0", file=sys.stderr)
        ok = False

    print("gradient check at the trained parameters:")
    ok = check_gradient(params, *make_batch(rng, 8),
                        GRAD_TOL_F32_TRAINED) and ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
