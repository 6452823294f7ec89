"""Differentially private SGD (DP-SGD) on the 8x8 scikit-learn digits, with
per-example gradients from kiln.vmap(kiln.grad(...)).

What it shows: DP-SGD needs each example's gradient on its own, to clip
it to a norm bound before the batch is averaged and noised. With kiln the
per-example gradients are one transform of the one-example loss,
kiln.vmap(kiln.grad(loss), in_axes=(None, 0, 0)), which the batching pass
compiles into batched products (no loop over examples); the clipping, the
sum, the Gaussian noise and the SGD update are in the same compiled step.
The noise is drawn with numpy outside the step and passed in.

Run (from a build tree):

    PYTHONPATH=build/python /usr/bin/python3 examples/python/dp_sgd.py \\
        [--steps 600] [--batch 64] [--clip 1.0] [--noise 0.5] [--lr 0.5] \\
        [--min-accuracy 0.85]

It first checks the per-example gradients of one batch against kiln.grad
run example by example, then trains the 64-128-10 perceptron of
train_digits.py and prints the loss, the time per step and the held-out
accuracy; exits 1 if a check fails or the accuracy is below
--min-accuracy.
"""

import argparse
import os
import sys
import time

import numpy as np

import kiln
import kiln.numpy as knp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_digits import (CLASSES, DATA_DIR, TRAIN_ROWS,  # noqa: E402
                          initial_parameters, logits)


def example_loss(params, x, onehot):
    """One example's softmax cross-entropy: x [64], onehot [10]."""
    log_p = kiln.nn.log_softmax(logits(params, x[None, :]), axis=-1)
    return -knp.sum(onehot[None, :] * log_p)


per_example_grads = kiln.vmap(kiln.grad(example_loss), in_axes=(None, 0, 0))


def make_step(clip, noise, lr):
    @kiln.jit
    def step(params, x, onehot, gaussian):
        grads = per_example_grads(params, x, onehot)
        # Each example's gradient clipped to norm <= clip.
        squares = sum(knp.sum(knp.reshape(g * g, (g.shape[0], -1)), axis=1)
                      for g in grads.values())
        scale = knp.minimum(1.0, clip / (knp.sqrt(squares) + 1e-12))
        batch = x.shape[0]
        new = {}
        for key, g in grads.items():
            factors = knp.reshape(scale, (batch,) + (1,) * (g.ndim - 1))
            total = knp.sum(g * factors, axis=0)
            noisy = (total + noise * clip * gaussian[key]) / batch
            new[key] = params[key] - lr * noisy
        loss = knp.mean(kiln.vmap(example_loss, in_axes=(None, 0, 0))(
            params, x, onehot))
        return loss, new
    return step


@kiln.jit
def predict(params, x):
    return knp.argmax(logits(params, x), axis=1)


def check_per_example(params, x, onehot):
    """The batched per-example gradients against kiln.grad per example."""
    batched = kiln.jit(per_example_grads)(params, x, onehot)
    one = kiln.jit(kiln.grad(example_loss))
    worst = 0.0
    for b in range(x.shape[0]):
        single = one(params, x[b], onehot[b])
        for key in params:
            worst = max(worst, float(np.max(np.abs(batched[key][b] -
                                                   single[key]))))
    print(f"per-example gradients: largest difference to kiln.grad per "
          f"example {worst:.2e}")
    return worst <= 1e-5


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DATA_DIR)
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=0.5,
                        help="noise multiplier (std / clip)")
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.0)
    args = parser.parse_args()

    images = np.load(os.path.join(args.data, "digits_images.npy"))
    labels = np.load(os.path.join(args.data, "digits_labels.npy"))
    x_all = (images / 16.0).astype(np.float32)
    onehot_all = np.eye(CLASSES, dtype=np.float32)[labels]
    params = initial_parameters()

    if not check_per_example(params, x_all[:16], onehot_all[:16]):
        print("FAILED: the per-example gradients differ")
        return 1

    rng = np.random.default_rng(args.seed)
    step = make_step(args.clip, args.noise, args.lr)
    seconds = []
    for k in range(args.steps):
        rows = (k * args.batch + np.arange(args.batch)) % TRAIN_ROWS
        gaussian = {key: rng.standard_normal(v.shape).astype(np.float32)
                    for key, v in params.items()}
        start = time.perf_counter()
        loss, params = step(params, x_all[rows], onehot_all[rows], gaussian)
        if k > 0:
            seconds.append(time.perf_counter() - start)
        if k % 100 == 0 or k + 1 == args.steps:
            print(f"step {k:4d}  loss {float(loss):.6f}")
    if seconds:
        print(f"step: {np.median(seconds) * 1e3:.3f} ms (median of "
              f"{len(seconds)}, batch {args.batch})")
    held = slice(TRAIN_ROWS, None)
    accuracy = float(np.mean(predict(params, x_all[held]) == labels[held]))
    print(f"held-out accuracy {accuracy:.3f} (clip {args.clip}, noise "
          f"multiplier {args.noise})")
    if accuracy < args.min_accuracy:
        print(f"FAILED: accuracy below {args.min_accuracy}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
