#!/usr/bin/env python3
"""Training a ResNet-18 and a small ViT: kiln against JAX, step by step.

Each model is written once over a namespace of numpy, lax and nn functions
(kiln.numpy/kiln.lax/kiln.nn or jax.numpy/jax.lax/jax.nn: kiln's have the
same names and signatures), initialized from one numpy generator, and
trained with plain SGD for --steps steps on the same synthetic batches
(4 batches of Gaussian images labeled by a fixed random linear teacher,
cycled), float32, the whole step (forward,
backward, update, batch-norm statistics) one jitted function:

  resnet18  torchvision's ResNet-18 (7x7/2 stem, 3x3/2 max pool, 4 stages
            of 2 basic blocks, 64-512 channels, batch norm in training
            mode with running statistics as state), 64x64 images, batch 8,
            10 classes
  vit       a ViT: 4x4 patches of 32x32 images (64 tokens), width 128,
            4 pre-norm blocks of 4-head attention and a GELU MLP (512),
            mean pooling, batch 16, 10 classes

The systems alternate step by step. Reported: the median step time of each
(after --warmup steps), their ratio, and the largest relative difference
between the two loss curves over all steps (goal: below 1e-4). As the
floor of that difference, JAX trains once more from the same weights
perturbed by a relative 1e-7 (float32 rounding): where that run drifts as
far from JAX's own curve, the training is chaotic and no two
implementations that round differently can stay closer.

  PYTHONPATH=build/python /work/bench-venv/bin/python bench/train_models.py \\
      --threads 1 --markdown bench/results-train-models-1t.md
"""

import argparse
import datetime
import functools
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--models", default="resnet18,vit")
    p.add_argument("--quick", action="store_true",
                   help="6 steps (a smoke run)")
    p.add_argument("--markdown", default=None)
    args = p.parse_args()
    if args.quick:
        args.steps, args.warmup = 6, 2
    return args


ARGS = parse_args()
# Threads for both systems, before either starts a pool.
machine.pin_threads(ARGS.threads)
STARTED = datetime.datetime.now(datetime.timezone.utc)

import numpy as np  # noqa: E402

import kiln  # noqa: E402
import kiln.numpy as knp  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
except ImportError:
    jax = None

# Step sizes small enough that the loss falls steadily: a diverging run
# would magnify float32 rounding differences into different curves.
LR = {"resnet18": 0.002, "vit": 0.02}


class Kiln:
    np, lax, nn = knp, kiln.lax, kiln.nn
    jit = staticmethod(kiln.jit)
    value_and_grad = staticmethod(kiln.value_and_grad)
    tree_map = staticmethod(kiln.tree_map)


if jax is not None:
    class Jax:
        np, lax, nn = jnp, jax.lax, jax.nn
        jit = staticmethod(jax.jit)
        value_and_grad = staticmethod(jax.value_and_grad)
        tree_map = staticmethod(jax.tree_util.tree_map)


# --- ResNet-18 ---------------------------------------------------------------

def conv(s, x, w, stride, pad):
    return s.lax.conv_general_dilated(
        x, w, (stride, stride), [(pad, pad), (pad, pad)],
        dimension_numbers=("NCHW", "OIHW", "NCHW"))


def batch_norm(s, x, p, state, name):
    """Training-mode batch norm over (N, H, W); returns y and the running
    statistics moved 10% toward the batch's."""
    mean = s.np.mean(x, axis=(0, 2, 3))
    var = s.np.mean(s.np.square(x - mean[None, :, None, None]),
                    axis=(0, 2, 3))
    y = (x - mean[None, :, None, None]) / s.np.sqrt(
        var[None, :, None, None] + 1e-5)
    y = y * p[name + ".scale"][None, :, None, None] + \
        p[name + ".bias"][None, :, None, None]
    state = dict(state)
    state[name + ".mean"] = 0.9 * state[name + ".mean"] + 0.1 * mean
    state[name + ".var"] = 0.9 * state[name + ".var"] + 0.1 * var
    return y, state


STAGES = [(64, 1), (128, 2), (256, 2), (512, 2)]


def resnet18_loss(s, p, state, x, labels):
    h = conv(s, x, p["stem"], 2, 3)
    h, state = batch_norm(s, h, p, state, "stem.bn")
    h = s.nn.relu(h)
    h = s.lax.reduce_window(h, -np.inf, s.lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                            [(0, 0), (0, 0), (1, 1), (1, 1)])
    for i, (width, stride) in enumerate(STAGES):
        for j in range(2):
            name = f"layer{i}.{j}"
            first = stride if j == 0 else 1
            out = conv(s, h, p[name + ".conv1"], first, 1)
            out, state = batch_norm(s, out, p, state, name + ".bn1")
            out = s.nn.relu(out)
            out = conv(s, out, p[name + ".conv2"], 1, 1)
            out, state = batch_norm(s, out, p, state, name + ".bn2")
            if name + ".down" in p:
                h = conv(s, h, p[name + ".down"], first, 0)
                h, state = batch_norm(s, h, p, state, name + ".down.bn")
            h = s.nn.relu(out + h)
    logits = s.np.mean(h, axis=(2, 3)) @ p["fc.w"] + p["fc.b"]
    logp = s.nn.log_softmax(logits, axis=-1)
    return -s.np.mean(s.np.sum(logp * labels, axis=-1)), state


def resnet18_init(rng, classes=10):
    f32 = np.float32
    p, state = {}, {}

    def kernel(name, out, cin, k):
        p[name] = (rng.standard_normal((out, cin, k, k)) *
                   np.sqrt(2.0 / (cin * k * k))).astype(f32)

    def bn(name, width):
        p[name + ".scale"] = np.ones(width, f32)
        p[name + ".bias"] = np.zeros(width, f32)
        state[name + ".mean"] = np.zeros(width, f32)
        state[name + ".var"] = np.ones(width, f32)

    kernel("stem", 64, 3, 7)
    bn("stem.bn", 64)
    cin = 64
    for i, (width, stride) in enumerate(STAGES):
        for j in range(2):
            name = f"layer{i}.{j}"
            kernel(name + ".conv1", width, cin if j == 0 else width, 3)
            bn(name + ".bn1", width)
            kernel(name + ".conv2", width, width, 3)
            bn(name + ".bn2", width)
            if j == 0 and (stride != 1 or cin != width):
                kernel(name + ".down", width, cin, 1)
                bn(name + ".down.bn", width)
        cin = width
    p["fc.w"] = (rng.standard_normal((512, classes)) /
                 np.sqrt(512)).astype(f32)
    p["fc.b"] = np.zeros(classes, f32)
    return p, state


def teacher_batch(rng, shape, classes=10):
    """Gaussian images labeled by a fixed random linear teacher (the same
    for every batch of `shape`), so that there is something to learn and
    the loss falls steadily."""
    teacher = np.random.default_rng(42).standard_normal(
        (int(np.prod(shape[1:])), classes))
    x = rng.standard_normal(shape).astype(np.float32)
    labels = np.argmax(x.reshape(shape[0], -1) @ teacher, axis=1)
    return x, np.eye(classes, dtype=np.float32)[labels]


def resnet18_batch(rng):
    return teacher_batch(rng, (8, 3, 64, 64))


# --- ViT ---------------------------------------------------------------------

VIT = dict(patch=4, image=32, width=128, depth=4, heads=4, mlp=512)


def layer_norm(s, x, scale, bias):
    mean = s.np.mean(x, axis=-1, keepdims=True)
    var = s.np.mean(s.np.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / s.np.sqrt(var + 1e-6) * scale + bias


def vit_loss(s, p, state, x, labels):
    b, c = x.shape[0], x.shape[1]
    k, n = VIT["patch"], VIT["image"] // VIT["patch"]
    d, heads = VIT["width"], VIT["heads"]
    patches = s.np.reshape(x, (b, c, n, k, n, k))
    patches = s.np.transpose(patches, (0, 2, 4, 1, 3, 5))
    h = s.np.reshape(patches, (b * n * n, c * k * k)) @ p["embed"] + \
        p["embed.b"]
    h = s.np.reshape(h, (b, n * n, d)) + p["pos"]
    tokens, dh = n * n, d // heads
    for i in range(VIT["depth"]):
        q = f"block{i}."
        a = layer_norm(s, h, p[q + "ln1.scale"], p[q + "ln1.bias"])
        qkv = s.np.reshape(a, (b * tokens, d)) @ p[q + "qkv"]

        def split_heads(t):
            t = s.np.reshape(t, (b, tokens, heads, dh))
            return s.np.reshape(s.np.transpose(t, (0, 2, 1, 3)),
                                (b * heads, tokens, dh))

        qh = split_heads(qkv[:, :d])
        kh = split_heads(qkv[:, d:2 * d])
        vh = split_heads(qkv[:, 2 * d:])
        scores = qh @ s.np.transpose(kh, (0, 2, 1)) / np.float32(np.sqrt(dh))
        att = s.nn.softmax(scores, axis=-1) @ vh
        att = s.np.transpose(s.np.reshape(att, (b, heads, tokens, dh)),
                             (0, 2, 1, 3))
        att = s.np.reshape(att, (b * tokens, d)) @ p[q + "proj"]
        h = h + s.np.reshape(att, (b, tokens, d))
        m = layer_norm(s, h, p[q + "ln2.scale"], p[q + "ln2.bias"])
        m = s.nn.gelu(s.np.reshape(m, (b * tokens, d)) @ p[q + "fc1"] +
                      p[q + "fc1.b"])
        m = m @ p[q + "fc2"] + p[q + "fc2.b"]
        h = h + s.np.reshape(m, (b, tokens, d))
    h = layer_norm(s, s.np.mean(h, axis=1), p["ln.scale"], p["ln.bias"])
    logp = s.nn.log_softmax(h @ p["head"], axis=-1)
    return -s.np.mean(s.np.sum(logp * labels, axis=-1)), state


def vit_init(rng, classes=10):
    f32 = np.float32
    d, m = VIT["width"], VIT["mlp"]
    pix = 3 * VIT["patch"] ** 2
    tokens = (VIT["image"] // VIT["patch"]) ** 2

    def dense(i, o):
        return (rng.standard_normal((i, o)) / np.sqrt(i)).astype(f32)

    p = {"embed": dense(pix, d), "embed.b": np.zeros(d, f32),
         "pos": (rng.standard_normal((tokens, d)) * 0.02).astype(f32),
         "ln.scale": np.ones(d, f32), "ln.bias": np.zeros(d, f32),
         "head": dense(d, classes)}
    for i in range(VIT["depth"]):
        q = f"block{i}."
        p.update({q + "ln1.scale": np.ones(d, f32),
                  q + "ln1.bias": np.zeros(d, f32),
                  q + "qkv": dense(d, 3 * d), q + "proj": dense(d, d),
                  q + "ln2.scale": np.ones(d, f32),
                  q + "ln2.bias": np.zeros(d, f32),
                  q + "fc1": dense(d, m), q + "fc1.b": np.zeros(m, f32),
                  q + "fc2": dense(m, d), q + "fc2.b": np.zeros(d, f32)})
    return p, {}


def vit_batch(rng):
    return teacher_batch(rng, (16, 3, 32, 32))


MODELS = {"resnet18": (resnet18_loss, resnet18_init, resnet18_batch),
          "vit": (vit_loss, vit_init, vit_batch)}


# --- Training ----------------------------------------------------------------

def train_step(s, loss_fn, lr, params, state, x, labels):
    (loss, state), grads = s.value_and_grad(
        lambda p: loss_fn(s, p, state, x, labels), has_aux=True)(params)
    params = s.tree_map(lambda w, g: w - lr * g, params, grads)
    return params, state, loss


def run(name):
    loss_fn, init, batch = MODELS[name]
    params, state = init(np.random.default_rng(0))
    # A synthetic dataset of 4 batches, cycled.
    data_rng = np.random.default_rng(1)
    dataset = [batch(data_rng) for _ in range(4)]
    batches = [dataset[i % 4] for i in range(ARGS.steps)]
    systems = [("kiln", Kiln)] + ([("JAX", Jax)] if jax is not None else [])
    steps = {label: s.jit(functools.partial(train_step, s, loss_fn, LR[name]))
             for label, s in systems}
    carry = {label: (params, state) for label, _ in systems}
    losses = {label: [] for label, _ in systems}
    times = {label: [] for label, _ in systems}
    for i, (x, labels) in enumerate(batches):
        for label, _ in systems:
            p, st = carry[label]
            start = time.perf_counter()
            p, st, loss = machine.block(
                steps[label](p, st, x, labels))
            times[label].append(time.perf_counter() - start)
            carry[label] = (p, st)
            losses[label].append(float(loss))
    median = {label: float(np.median(t[ARGS.warmup:]))
              for label, t in times.items()}
    if jax is not None:
        # The noise floor: JAX from weights rounded differently.
        noise = np.random.default_rng(5)
        p = {k: (v * (1 + 1e-7 * noise.standard_normal(v.shape))).astype(
            v.dtype) for k, v in params.items()}
        st, floor = state, []
        for x, labels in batches:
            p, st, loss = steps["JAX"](p, st, x, labels)
            floor.append(float(loss))
    curve = np.asarray(losses["kiln"])
    row = {"model": name, "kiln": median["kiln"], "first": curve[0],
           "last": curve[-1]}
    if jax is not None:
        theirs = np.asarray(losses["JAX"])
        row["JAX"] = median["JAX"]
        row["diff"] = float(np.max(np.abs(curve - theirs) / np.abs(theirs)))
        row["floor"] = float(np.max(np.abs(np.asarray(floor) - theirs) /
                                    np.abs(theirs)))
    return row


def main():
    rows = [run(name) for name in ARGS.models.split(",")]
    lines = ["# Training a ResNet-18 and a ViT: kiln against JAX", ""]
    lines += machine.measured_lines(STARTED, __file__)
    lines += ["", f"{ARGS.threads} thread(s), float32, SGD (lr "
              f"{', '.join(f'{m} {lr}' for m, lr in LR.items())}), "
              f"{ARGS.steps} steps, median step time after {ARGS.warmup} "
              "(ms); loss diff is the largest relative difference between "
              "the two loss curves, JAX vs JAX the same for JAX from "
              "weights perturbed by 1e-7.", ""]
    columns = ["model", "kiln step", "loss first -> last"]
    if jax is not None:
        columns += ["JAX step", "kiln / JAX", "loss diff", "JAX vs JAX"]
    lines += machine.table_head(columns)
    for r in rows:
        line = (f"| {r['model']} | {r['kiln'] * 1e3:.1f} | "
                f"{r['first']:.4f} -> {r['last']:.4f} |")
        if jax is not None:
            line += (f" {r['JAX'] * 1e3:.1f} | {r['kiln'] / r['JAX']:.2f} | "
                     f"{r['diff']:.1e} | {r['floor']:.1e} |")
        lines.append(line)
    machine.write_report(lines, ARGS.markdown)


if __name__ == "__main__":
    main()
