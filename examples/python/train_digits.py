"""An MLP trained on the 8x8 scikit-learn digits from Python with kiln.

What it shows: the whole training step -- forward pass, softmax
cross-entropy, the backward pass from kiln.value_and_grad and the update by
a kiln.optim optimizer (plain SGD by default, SGD with momentum 0.9, or
Adam) -- is one function compiled by kiln.jit, with the parameters as a
dict pytree ({"w1", "b1", "w2", "b2"}) and the optimizer's state going in
and coming out. It is the same run as the C++ example
examples/training/train_digits.cpp: a 64-128-10 perceptron with ReLU, the
same optimizers, the first 1500 images for training and
the last 297 held out, step k on training rows (k*B + j) mod 1500, and the
same initial weights (std::mt19937(2024) with libstdc++'s
uniform_real_distribution, reproduced in numpy below), so the two print
comparable losses and accuracies.

Run (from a build tree):

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_digits.py \
        [--steps 1000] [--optimizer sgd|momentum|adam] [--lr X] \
        [--batch 64] [--min-accuracy 0.9]

Elastically, as workers that may die or join mid-run (README.md, "Elastic
training"):

    PYTHONPATH=build/python build/bin/kiln-launch --nproc 2:4 -- \
        /usr/bin/python3 examples/python/train_digits.py --elastic --batch 48

The learning rate defaults to 0.3 for sgd, 0.05 for momentum and 0.001 for
adam.

Prints the loss every 100 steps, the compile time, the time per step
(one call of the compiled step) and the train and held-out accuracy; exits
1 if the held-out accuracy is below --min-accuracy.
"""

import argparse
import os
import sys
import time

import numpy as np

import kiln
import kiln.numpy as knp
from kiln.distributed import elastic

INPUTS, HIDDEN, CLASSES = 64, 128, 10
TRAIN_ROWS = 1500
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        os.pardir, "training", "data")


def initial_parameters(seed=2024):
    """PyTorch's nn.Linear initialization, uniform in +-1/sqrt(fan_in), drawn
    exactly as train_digits.cpp draws it: std::mt19937(seed) (numpy's legacy
    RandomState seeds MT19937 the same way) and libstdc++'s
    uniform_real_distribution<double>, which takes two 32-bit words per
    number (generate_canonical), rounded to float32."""
    rs = np.random.RandomState(seed)

    def uniform(shape, fan_in):
        count = int(np.prod(shape))
        words = rs.randint(0, 2**32, size=2 * count,
                           dtype=np.uint32).astype(np.float64)
        canonical = (words[0::2] + words[1::2] * 2.0**32) / 2.0**64
        canonical = np.minimum(canonical, np.nextafter(1.0, 0.0))
        bound = 1.0 / np.sqrt(fan_in)
        values = canonical * (2 * bound) + (-bound)
        return values.astype(np.float32).reshape(shape)

    # The C++ example draws w1, b1, w2, b2 in this order.
    w1 = uniform((INPUTS, HIDDEN), INPUTS)
    b1 = uniform((HIDDEN,), INPUTS)
    w2 = uniform((HIDDEN, CLASSES), HIDDEN)
    b2 = uniform((CLASSES,), HIDDEN)
    return {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


def logits(params, x):
    hidden = kiln.nn.relu(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params, x, onehot):
    """Mean softmax cross-entropy of a batch."""
    log_p = kiln.nn.log_softmax(logits(params, x), axis=-1)
    return -knp.mean(knp.sum(onehot * log_p, axis=1))


# --optimizer: (default learning rate, kiln.optim optimizer for an lr).
OPTIMIZERS = {
    "sgd": (0.3, lambda lr: kiln.optim.sgd(lr)),
    "momentum": (0.05, lambda lr: kiln.optim.sgd(lr, momentum=0.9)),
    "adam": (1e-3, lambda lr: kiln.optim.adam(lr)),
}


def make_step(optimizer, elastic_run=False):
    def train_step(params, opt_state, x, onehot):
        value, grads = kiln.value_and_grad(loss)(params, x, onehot)
        params, opt_state = optimizer.update(params, grads, opt_state)
        return value, params, opt_state
    if elastic_run:
        # Data parallel over the run's current workers (x and onehot are
        # each worker's rows), compiled once per size of the run.
        return elastic.jit(train_step, batch_argnums=(2, 3))
    return kiln.jit(train_step)


def train_elastically(train_step, params, opt_state, x_all, onehot_all, args):
    """The training loop of an elastic run (kiln-launch --nproc MIN:MAX):
    the state (parameters, optimizer state, step) is committed every
    --commit-every steps; when a worker dies, the others go back to the
    last commit and go on at their new size; workers that arrive join at a
    commit. Every worker takes its rows of each global batch."""
    state = elastic.State(params=params, opt_state=opt_state, step=0)

    @elastic.run
    def train(state):
        while state.step < args.steps:
            k = state.step
            rows = (k * args.batch + np.arange(args.batch)) % TRAIN_ROWS
            value, state.params, state.opt_state = train_step(
                state.params, state.opt_state, elastic.block(x_all[rows]),
                elastic.block(onehot_all[rows]))
            state.step += 1
            if (k % 100 == 0 or k + 1 == args.steps) and (
                    elastic.comm().rank == 0):
                print(f"step {k:4d}  loss {float(value):.6f}  "
                      f"({elastic.comm().size} workers)", flush=True)
            if state.step % args.commit_every == 0:
                state.commit()
        return elastic.comm().rank

    rank = train(state)
    return rank, state.params


@kiln.jit
def predict(params, x):
    return knp.argmax(logits(params, x), axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=DATA_DIR)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--optimizer", choices=sorted(OPTIMIZERS),
                        default="sgd")
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--min-accuracy", type=float, default=0.0)
    parser.add_argument("--elastic", action="store_true",
                        help="train as a worker of an elastic run "
                        "(kiln-launch --nproc MIN:MAX)")
    parser.add_argument("--commit-every", type=int, default=50)
    args = parser.parse_args()
    if args.steps < 0 or not 1 <= args.batch <= TRAIN_ROWS:
        parser.error("--steps must be >= 0 and --batch in 1..1500")

    images = np.load(os.path.join(args.data, "digits_images.npy"))
    labels = np.load(os.path.join(args.data, "digits_labels.npy"))
    x_all = (images / 16.0).astype(np.float32)         # pixels 0..16 -> [0, 1]
    onehot_all = np.eye(CLASSES, dtype=np.float32)[labels]

    params = initial_parameters()
    default_lr, make_optimizer = OPTIMIZERS[args.optimizer]
    optimizer = make_optimizer(args.lr if args.lr is not None else default_lr)
    opt_state = optimizer.init(params)
    train_step = make_step(optimizer, args.elastic)
    if args.elastic:
        rank, params = train_elastically(train_step, params, opt_state, x_all,
                                         onehot_all, args)
        if rank != 0:  # None: arrived after the end; others: rank 0 reports
            return 0
        args.steps = 0  # trained
    step_seconds = []
    for k in range(args.steps):
        rows = (k * args.batch + np.arange(args.batch)) % TRAIN_ROWS
        x, onehot = x_all[rows], onehot_all[rows]
        start = time.perf_counter()
        value, params, opt_state = train_step(params, opt_state, x, onehot)
        seconds = time.perf_counter() - start
        if k > 0:                      # the first call traces and compiles
            step_seconds.append(seconds)
        if k % 100 == 0 or k + 1 == args.steps:
            print(f"step {k:4d}  loss {float(value):.6f}")
    if step_seconds:
        print(f"compile: {train_step.last_compile_seconds:.3f} s (trace "
              f"{train_step.last_trace_seconds:.3f} s); train step (call of "
              f"the compiled function from Python): median "
              f"{1e6 * np.median(step_seconds):.1f} us, mean "
              f"{1e6 * np.mean(step_seconds):.1f} us")

    def accuracy(first, last):
        predicted = predict(params, x_all[first:last])
        return float(np.mean(predicted == labels[first:last]))

    train_accuracy = accuracy(0, TRAIN_ROWS)
    held_out = accuracy(TRAIN_ROWS, len(labels))
    print(f"train accuracy {train_accuracy:.4f}, held-out accuracy "
          f"{held_out:.4f} ({len(labels) - TRAIN_ROWS} images)")
    if held_out < args.min_accuracy:
        print(f"FAIL: held-out accuracy {held_out:.4f} is below "
              f"{args.min_accuracy:.4f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
