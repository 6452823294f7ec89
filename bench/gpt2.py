"""The GPT-2-style block stack the parallelism benchmarks train
(tensor_parallel.py, pipeline_parallel.py): L pre-norm transformer blocks
(layer norm, causal self-attention with H heads and biased q/k/v
projections, output projection, residual; layer norm, d -> 4d -> d MLP with
GELU, residual) on sequences of S tokens, and the mean squared distance to
a target as the loss (no vocabulary: the blocks are what is split)."""

import sys

import numpy as np

# Per block, in argument order: (name, shape in units of d, Megatron split).
# Splits are per dimension: "tp" or "".
BLOCK = [
    ("ln1_g", (1,), ("",)), ("ln1_b", (1,), ("",)),
    ("wq", (1, 1), ("", "tp")), ("bq", (1,), ("tp",)),
    ("wk", (1, 1), ("", "tp")), ("bk", (1,), ("tp",)),
    ("wv", (1, 1), ("", "tp")), ("bv", (1,), ("tp",)),
    ("wo", (1, 1), ("tp", "")), ("bo", (1,), ("",)),
    ("ln2_g", (1,), ("",)), ("ln2_b", (1,), ("",)),
    ("w1", (1, 4), ("", "tp")), ("c1", (4,), ("tp",)),
    ("w2", (4, 1), ("tp", "")), ("c2", (1,), ("",)),
]


def add_model_args(parser, layers=8, d_model=512, heads=8, seq=128, batch=8):
    parser.add_argument("--layers", type=int, default=layers)
    parser.add_argument("--d-model", type=int, default=d_model)
    parser.add_argument("--heads", type=int, default=heads)
    parser.add_argument("--seq", type=int, default=seq)
    parser.add_argument("--batch", type=int, default=batch)


def quick(args):
    """2 blocks of width 64, 4 heads, 4 sequences of 16 tokens."""
    args.layers, args.d_model, args.heads, args.seq, args.batch = 2, 64, 4, 16, 4


def param_shapes(args):
    """(name, shape, Megatron split) of every parameter, block by block."""
    d = args.d_model
    return [(f"{name}{layer}", tuple(k * d for k in shape), split)
            for layer in range(args.layers) for name, shape, split in BLOCK]


def import_kiln(who):
    try:
        import kiln
        import kiln.numpy as knp
    except ImportError as e:
        sys.exit(f"{who}: cannot import kiln ({e}); run with PYTHONPATH=<build>/python")
    return kiln, knp


def loss_fn(args, batch, kiln, knp):
    """loss(params, x, target) for `batch` sequences: x and target are
    [batch, S, d]."""
    B, S, d, H = batch, args.seq, args.d_model, args.heads
    n = len(BLOCK)

    def heads(t):  # [B S, d] -> [B, H, S, d / H]
        return knp.transpose(knp.reshape(t, (B, S, H, d // H)), (0, 2, 1, 3))

    def loss(params, x, target):
        h = knp.reshape(x, (B * S, d))
        for layer in range(args.layers):
            p = dict(zip([name for name, _, _ in BLOCK],
                         params[layer * n:(layer + 1) * n]))
            a = kiln.nn.layer_norm(h, p["ln1_g"], p["ln1_b"])
            o = kiln.nn.scaled_dot_product_attention(
                heads(a @ p["wq"] + p["bq"]), heads(a @ p["wk"] + p["bk"]),
                heads(a @ p["wv"] + p["bv"]), is_causal=True)
            o = knp.reshape(knp.transpose(o, (0, 2, 1, 3)), (B * S, d))
            h = h + o @ p["wo"] + p["bo"]
            a = kiln.nn.layer_norm(h, p["ln2_g"], p["ln2_b"])
            h = h + kiln.nn.gelu(a @ p["w1"] + p["c1"]) @ p["w2"] + p["c2"]
        diff = h - knp.reshape(target, (B * S, d))
        return knp.mean(diff * diff)

    return loss


def initial_params(args, rng):
    """GPT-2's initialisation: layer-norm gains 1, weights N(0, 0.02),
    biases 0 (f32)."""
    values = []
    for name, shape, _ in param_shapes(args):
        if name.startswith(("ln1_g", "ln2_g")):
            values.append(np.ones(shape, np.float32))
        elif len(shape) == 2:
            values.append(rng.normal(0.0, 0.02, shape).astype(np.float32))
        else:
            values.append(np.zeros(shape, np.float32))
    return values
