"""Models as current PyTorch and transformers export them, through kiln and
ONNX Runtime.

Builds each model with random weights from a fresh seed (printed, and
accepted back with --seed), exports it the default way,
torch.onnx.export(model, args, path, dynamo=True) (IR version 10, the
exporter's default opset; BERT, GPT-2 and the Llama-style decoder also at
opset 23, `name@23`, where the exporter writes the Attention and
RMSNormalization operators; `bert_padded` with an attention mask that pads
one sequence and masks the other out entirely), compiles it with
kiln-compile (no flags
beyond the file), runs it with kiln-run and compares every output with ONNX
Runtime's on the same inputs: |kiln - ort| <= 1e-4 * max |ort| + 1e-5.
For the models with attention, every attention must also have become one
fused kiln.attention (counted as calls of the CPU's attention kernel in
`kiln-compile --emit=mlir`): the softmax left written out computes the same
numbers, slower and with the scores in memory.
Prints one line per model with its max error, or what failed.

    exported_models.py BIN_DIR WORK_DIR [--seed N] [--models a,b,...]
    exported_models.py BIN_DIR WORK_DIR --ops     (the op types of each export)

Needs torch, torchvision, transformers, onnxscript, onnxruntime and numpy
(the benchmark virtualenv, bench/setup-anchors.sh); exits 77 (ctest's SKIP)
without them. The files are made here, at test time, never committed.
"""
import argparse
import collections
import subprocess
import sys
import traceback
from pathlib import Path

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torchvision
    import transformers

    import model_files
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)


class LastHidden(torch.nn.Module):
    """A transformers model returning its first output as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        out = self.model(*args)
        return out[0] if isinstance(out, (tuple, list)) else out.last_hidden_state


class Recurrent(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.net = getattr(torch.nn, kind)(12, 16, num_layers=2, batch_first=True)

    def forward(self, x):
        return self.net(x)[0]


class Padded(torch.nn.Module):
    """A transformers encoder called with its attention mask."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, mask):
        return self.model(input_ids=ids, attention_mask=mask).last_hidden_state


def padded_tokens(vocab, seq=32):
    """Two token sequences and their mask: the first padded after 20
    tokens, the second masked out entirely (its softmax rows are those of
    equal scores, as the exporter's lowest-float mask makes them)."""
    mask = torch.ones(2, seq, dtype=torch.int64)
    mask[0, 20:] = 0
    mask[1, :] = 0
    return token_ids(vocab, n=2, seq=seq)[0], mask


class StackedAttention(torch.nn.Module):
    """Self-attention as timm's ViT blocks write it: one projection to a
    stacked q, k, v, split into heads by reshape, permute and unbind."""

    def __init__(self, dim=128, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads) \
            .permute(2, 0, 3, 1, 4).unbind(0)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, n, c))


class CausalSplitAttention(torch.nn.Module):
    """Causal self-attention as nanoGPT writes it: q, k and v split off one
    projection, each viewed as heads and transposed."""

    def __init__(self, dim=128, heads=4):
        super().__init__()
        self.heads = heads
        self.c_attn = torch.nn.Linear(dim, 3 * dim)
        self.c_proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (h.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for h in self.c_attn(x).split(c, dim=2))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v,
                                                             is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(b, t, c))


class MultiheadSelfAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(128, 4, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class DataDependentBranch(torch.nn.Module):
    """torch.cond on the data: a branch chosen by the input's sum."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: torch.tanh(self.a(x)),
                          lambda x: torch.relu(self.b(x)), (x,))


def image(n=1, size=64):
    return (torch.randn(n, 3, size, size),)


def token_ids(vocab, n=1, seq=32):
    return (torch.randint(0, vocab, (n, seq)),)


def make(name):
    """(module, example arguments) of the model `name`."""
    tv = torchvision.models
    if name == "resnet18":
        return tv.resnet18(), image()
    if name == "mobilenet_v3_small":
        return tv.mobilenet_v3_small(), image()
    if name == "efficientnet_b0":
        return tv.efficientnet_b0(), image()
    if name == "densenet121":
        return tv.densenet121(), image()
    if name == "vit":
        model = tv.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                     num_heads=2, hidden_dim=64, mlp_dim=128,
                                     num_classes=10)
        # torchvision starts the head at zero, which would make every output
        # 0 whatever the body computes.
        torch.nn.init.normal_(model.heads.head.weight, std=0.5)
        return model, image(size=32)
    if name == "convnext_tiny":
        return tv.convnext_tiny(), image()
    if name == "bert":
        cfg = transformers.BertConfig(hidden_size=128, num_hidden_layers=2,
                                      num_attention_heads=4,
                                      intermediate_size=256)
        return LastHidden(transformers.BertModel(cfg)), token_ids(cfg.vocab_size)
    if name == "bert_padded":
        cfg = transformers.BertConfig(hidden_size=128, num_hidden_layers=2,
                                      num_attention_heads=4,
                                      intermediate_size=256)
        return Padded(transformers.BertModel(cfg)), padded_tokens(cfg.vocab_size)
    if name == "gpt2":
        cfg = transformers.GPT2Config(n_embd=128, n_layer=2, n_head=4,
                                      n_positions=64, use_cache=False)
        return LastHidden(transformers.GPT2Model(cfg)), token_ids(cfg.vocab_size)
    if name == "llama":
        cfg = transformers.LlamaConfig(hidden_size=128, intermediate_size=256,
                                       num_hidden_layers=2,
                                       num_attention_heads=4,
                                       num_key_value_heads=2, vocab_size=512,
                                       max_position_embeddings=64,
                                       use_cache=False)
        return LastHidden(transformers.LlamaModel(cfg)), token_ids(cfg.vocab_size)
    if name == "stacked_attention":
        return StackedAttention(), (torch.randn(2, 50, 128),)
    if name == "causal_attention":
        return CausalSplitAttention(), (torch.randn(2, 50, 128),)
    if name == "multihead_attention":
        return MultiheadSelfAttention(), (torch.randn(3, 20, 128),)
    if name in ("lstm", "gru"):
        return Recurrent(name.upper()), (torch.randn(2, 7, 12),)
    if name == "cond":
        return DataDependentBranch(), (torch.randn(3, 8),)
    raise ValueError(f"unknown model {name}")


MODELS = ["resnet18", "mobilenet_v3_small", "efficientnet_b0", "densenet121",
          "vit", "convnext_tiny", "bert", "bert_padded", "gpt2", "llama", "lstm", "gru",
          "cond", "bert@23", "gpt2@23", "llama@23", "stacked_attention",
          "causal_attention", "multihead_attention"]

# How many attentions each model has (one per layer), every one of which
# kiln-compile must fuse.
ATTENTIONS = {"vit": 2, "bert": 2, "bert_padded": 2, "gpt2": 2, "llama": 2,
              "bert@23": 2, "gpt2@23": 2, "llama@23": 2,
              "stacked_attention": 1, "causal_attention": 1,
              "multihead_attention": 1}


def fused_attentions(bin_dir, path):
    """How many fused attentions kiln-compile makes of the model at `path`:
    its calls of the CPU's attention kernel."""
    done = subprocess.run([bin_dir / "kiln-compile", path, "--emit=mlir", "-o", "-"],
                          capture_output=True, text=True)
    return done.stdout.count("llvm.call @kiln_attention_f32_forward(")


def export(name, path, seed):
    """Exports model `name`, or `name@OPSET` at that opset (from 23 the
    exporter writes Attention, RotaryEmbedding and RMSNormalization)."""
    torch.manual_seed(seed)
    name, _, opset = name.partition("@")
    module, args = make(name)
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), dynamo=True,
                          external_data=False, verbose=False,
                          **({"opset_version": int(opset)} if opset else {}))
    return [a.numpy() for a in args]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bin_dir", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--ops", action="store_true")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
    print(f"seed {seed} (rerun with --seed {seed}); torch {torch.__version__}, "
          f"transformers {transformers.__version__}, onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}")
    failures = 0
    for i, name in enumerate(args.models.split(",")):
        path = args.work / f"{name}.onnx"
        try:
            inputs = export(name, path, seed + i)
        except Exception:
            print(f"{name}: the export failed:\n{traceback.format_exc(limit=2)}")
            failures += 1
            continue
        proto = onnx.load(str(path), load_external_data=False)
        opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
        header = f"{name} (IR {proto.ir_version}, opset {opset})"
        if args.ops:
            ops = collections.Counter(n.op_type if not n.domain else f"{n.domain}.{n.op_type}"
                                      for n in proto.graph.node)
            print(f"{header}: {dict(sorted(ops.items()))}")
            continue
        session = ort.InferenceSession(str(path))
        feeds = {inp.name: x for inp, x in zip(session.get_inputs(), inputs)}
        want = session.run(None, feeds)
        out, error = model_files.run_kiln(args.bin_dir, path, inputs, args.work)
        if error:
            print(f"{header}: FAILED {error}")
            failures += 1
            continue
        worst = 0.0
        ok = True
        names = [o.name for o in session.get_outputs()]
        for oname, expected in zip(names, want):
            got = np.load(out / f"{oname}.npy")
            if got.shape != expected.shape:
                print(f"{header}: output {oname} has shape {got.shape}, ONNX Runtime's {expected.shape}")
                ok = False
                continue
            scale = float(np.max(np.abs(expected))) if expected.size else 0.0
            error = float(np.max(np.abs(got.astype(np.float64) - expected))) if expected.size else 0.0
            rel = error / scale if scale else error
            # max() would pass over a NaN in the first place.
            worst = rel if np.isnan(rel) else max(worst, rel)
            ok &= error <= 1e-4 * scale + 1e-5
        fused = ""
        if name in ATTENTIONS:
            count = fused_attentions(args.bin_dir, path)
            fused = f", {count} of {ATTENTIONS[name]} attentions fused"
            ok &= count == ATTENTIONS[name]
        print(f"{header}: max |kiln - ort| / max |ort| = {worst:.2e}{fused} "
              f"{'ok' if ok else 'DIFFERS'}")
        failures += not ok
    print(f"{failures} of {len(args.models.split(','))} models failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
