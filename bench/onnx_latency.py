"""ONNX models through kiln and ONNX Runtime: latency, same file, same inputs.

Exports each model with random weights (nothing is downloaded), compiles it
with kiln-compile (wall time reported), checks every output against ONNX
Runtime on the same inputs (1e-4 of the largest reference value), then
times them at every thread count and batch size:

- kiln: `kiln-run --repeat N`, its printed median (each call allocates its
  outputs), with OMP_NUM_THREADS set;
- ONNX Runtime: `InferenceSession.run` with `intra_op_num_threads` set,
  `inter_op_num_threads` 1, sequential execution, all graph optimizations
  (its default), median of N calls after a warm-up;
- PyTorch (`--torch`, `--torch-compile`): the module the file was exported
  from (same seed, same weights), under `torch.inference_mode` with
  `torch.set_num_threads`, eager or through `torch.compile` (inductor; the
  first call, which compiles, is not timed), median of N calls, each in a
  process of its own; its outputs' difference from ONNX Runtime's is
  reported, and a model PyTorch fails to run or compile is marked
  "failed" in its columns (not counted as kiln's failure).

All run under `taskset` on as many CPUs as threads. The systems take
turns for `--rounds` rounds and each reports the median of its rounds'
medians, since the host may be shared. Needs the benchmark virtualenv
(bench/setup-anchors.sh) with torchvision and transformers:

    /work/bench-venv/bin/python bench/onnx_latency.py --build-dir build \\
        [--models resnet50,bert,lstm] [--batches 1,8] [--threads 1,2] \\
        [--rounds 3] [--work DIR] [--markdown FILE] [--bf16] [--int8] \\
        [--torch] [--torch-compile] [--exporter dynamo|torchscript]

Models: ResNet-50 (torchvision, 224x224; also named: mobilenet_v2,
mobilenet_v3_small, efficientnet_b0, densenet121 and inception_v3 (299x299),
torchvision with random weights), a BERT-base-sized encoder
(transformers BertModel: 12 layers, hidden 768, 12 heads, FFN 3072, sequence
128, the last 28 positions masked) and a 2-layer LSTM (input 256, hidden
512, sequence 128, seq-first); `gru` (the same shape as the LSTM) and `gpt2`
(a GPT-2 small decoder, sequence 128, the last 28 positions padded) and
`llama` (a Llama-style decoder: 6 layers, hidden 768, 12 query heads on 4
key/value heads, causal over 512 tokens) are there to be named too. The
files are written as current PyTorch writes them by default,
`torch.onnx.export(..., dynamo=True)` at the exporter's default opset (IR
10); `--exporter torchscript` writes them with the TorchScript exporter at
opset 17 instead, as the tables before 2026-12 were made. Exit status 1
when a model fails to compile or run, or an output differs.

--int8 also quantizes each vision model, BERT and GPT-2 with ONNX Runtime's
static quantizer (QDQ form, its default: uint8 activations, int8 weights
per tensor, calibrated on four random images or token sequences) and
times kiln and ONNX Runtime
on that same quantized file in the same rounds; kiln's int8 outputs are
compared with ONNX Runtime's int8 ones (reported, not checked: the two
round their requantizations differently).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SEQ = 128

# A model as PyTorch runs it: the module, the arguments its ONNX export is
# traced with, the names of its inputs and outputs in order, and the inputs
# (numpy) that every system is timed on.
Built = collections.namedtuple(
    "Built", "module trace_args input_names output_names inputs")


def build_vision(name, batch):
    """A torchvision classifier with random weights, on images of the size
    it was made for (299 for Inception-v3, 224 for the others)."""
    import torch
    import torchvision
    torch.manual_seed(0)
    extra = {"aux_logits": False, "init_weights": False} if name == "inception_v3" else {}
    model = getattr(torchvision.models, name)(weights=None, **extra).eval()
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(batch, 3, size, size)
    rng = np.random.default_rng(0)
    return Built(model, (x,), ["input"], ["logits"],
                 {"input": rng.standard_normal((batch, 3, size, size)).astype(np.float32)})


VISION = ["resnet50", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
          "densenet121", "inception_v3"]


def build_bert(batch):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=768, num_hidden_layers=12,
                                     num_attention_heads=12,
                                     intermediate_size=3072)
    bert = transformers.BertModel(config).eval()

    class Outputs(torch.nn.Module):
        """The model's two tensors as a tuple, for the exporter."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            out = self.model(input_ids=ids, attention_mask=mask)
            return out.last_hidden_state, out.pooler_output

    ids = torch.zeros(batch, SEQ, dtype=torch.int64)
    mask = torch.ones(batch, SEQ, dtype=torch.int64)
    rng = np.random.default_rng(0)
    padded = np.ones((batch, SEQ), np.int64)
    padded[:, 100:] = 0
    return Built(Outputs(bert), (ids, mask), ["input_ids", "attention_mask"],
                 ["last_hidden_state", "pooler_output"],
                 {"input_ids": rng.integers(0, config.vocab_size,
                                            (batch, SEQ)).astype(np.int64),
                  "attention_mask": padded})


def build_recurrent(kind, batch):
    """A 2-layer torch.nn.LSTM or GRU (input 256, hidden 512), seq-first."""
    import torch
    torch.manual_seed(0)
    model = getattr(torch.nn, kind)(input_size=256, hidden_size=512, num_layers=2).eval()
    x = torch.randn(SEQ, batch, 256)
    rng = np.random.default_rng(0)
    outputs = ["output", "h_n", "c_n"] if kind == "LSTM" else ["output", "h_n"]
    return Built(model, (x,), ["input"], outputs,
                 {"input": rng.standard_normal((SEQ, batch, 256)).astype(np.float32)})


def build_gpt2(batch):
    """A GPT-2-style decoder (transformers GPT2Model: 12 layers, hidden 768,
    12 heads, causal attention, a padding mask), eager attention so that the
    TorchScript exporter takes it."""
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.GPT2Config()
    config._attn_implementation = "eager"
    gpt2 = transformers.GPT2Model(config).eval()

    class Hidden(torch.nn.Module):
        """The last hidden state, for the exporter."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, ids, mask):
            positions = torch.arange(ids.shape[1]).unsqueeze(0)
            return self.model(input_ids=ids, attention_mask=mask,
                              position_ids=positions, use_cache=False).last_hidden_state

    ids = torch.zeros(batch, SEQ, dtype=torch.int64)
    mask = torch.ones(batch, SEQ, dtype=torch.int64)
    rng = np.random.default_rng(0)
    padded = np.ones((batch, SEQ), np.int64)
    padded[:, 100:] = 0
    return Built(Hidden(gpt2), (ids, mask), ["input_ids", "attention_mask"],
                 ["last_hidden_state"],
                 {"input_ids": rng.integers(0, config.vocab_size,
                                            (batch, SEQ)).astype(np.int64),
                  "attention_mask": padded})


LLAMA_SEQ = 512


def build_llama(batch):
    """A Llama-style decoder (transformers LlamaModel: 6 layers, hidden
    768, 12 query heads sharing 4 key/value heads, FFN 2048 with SiLU
    gates, rotary positions, RMS norms), causal attention over 512 tokens,
    no padding."""
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        hidden_size=768, intermediate_size=2048, num_hidden_layers=6,
        num_attention_heads=12, num_key_value_heads=4, vocab_size=32000,
        max_position_embeddings=LLAMA_SEQ, use_cache=False)
    llama = transformers.LlamaModel(config).eval()

    class Hidden(torch.nn.Module):
        """The last hidden state, for the exporter."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, ids):
            return self.model(input_ids=ids, use_cache=False).last_hidden_state

    ids = torch.zeros(batch, LLAMA_SEQ, dtype=torch.int64)
    rng = np.random.default_rng(0)
    return Built(Hidden(llama), (ids,), ["input_ids"], ["last_hidden_state"],
                 {"input_ids": rng.integers(0, config.vocab_size,
                                            (batch, LLAMA_SEQ)).astype(np.int64)})


BUILDERS = {"bert": build_bert, "gpt2": build_gpt2, "llama": build_llama,
            "lstm": lambda batch: build_recurrent("LSTM", batch),
            "gru": lambda batch: build_recurrent("GRU", batch)}
for _name in VISION:
    BUILDERS[_name] = lambda batch, name=_name: build_vision(name, batch)


EXPORTERS = ("dynamo", "torchscript")


def export(name, path, batch, exporter):
    """Exports model `name` at `batch` to `path` and returns the inputs to run
    it on: with `torch.onnx.export(..., dynamo=True)` and its default opset
    (what current PyTorch writes when nothing is asked), or with the
    TorchScript exporter at opset 17 (`exporter` "torchscript", the files of
    the earlier tables)."""
    import torch
    built = BUILDERS[name](batch)
    # The wrappers around transformers' models are modules of their own,
    # in training mode until told otherwise.
    built.module.eval()
    options = ({"dynamo": True, "external_data": False, "verbose": False}
               if exporter == "dynamo" else {"dynamo": False, "opset_version": 17})
    with torch.no_grad():
        torch.onnx.export(built.module, built.trace_args, str(path),
                          input_names=built.input_names,
                          output_names=built.output_names, **options)
    return built.inputs


def quantize(model, inputs, path):
    """`model` quantized by ONNX Runtime's static quantizer into `path`
    (QDQ, uint8 activations, int8 weights), calibrated on four random
    inputs shaped like `inputs` (integer inputs, token ids and masks, as
    shuffled copies of theirs)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.batches = [{k: rng.standard_normal(v.shape).astype(v.dtype)
                             if v.dtype.kind == "f" else
                             rng.permutation(v.reshape(-1)).reshape(v.shape)
                             for k, v in inputs.items()} for _ in range(4)]

        def get_next(self):
            return self.batches.pop() if self.batches else None

    prepared = path.with_suffix(".pre.onnx")
    quant_pre_process(str(model), str(prepared))
    quantize_static(str(prepared), str(path), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def compile_and_run(bin_dir, model, kmod, out_dir, input_paths, flags=()):
    """Compiles `model` into `kmod` with `flags` and runs it once on
    `input_paths` into `out_dir`: (None or what failed, the compile's wall
    time in seconds)."""
    start = time.time()
    compiled = subprocess.run([bin_dir / "kiln-compile", model, "-o", kmod, *flags],
                              capture_output=True, text=True)
    seconds = time.time() - start
    if compiled.returncode:
        return "compile FAILED: " + compiled.stderr.strip()[:400], seconds
    ran = subprocess.run([bin_dir / "kiln-run", kmod, "--output-dir", out_dir]
                         + [a for p in input_paths for a in ("--input", p)],
                         capture_output=True, text=True)
    return ("run FAILED: " + ran.stderr.strip()[:400] if ran.returncode else None,
            seconds)


def relative_difference(gots, wants):
    """The largest |got - want| over pairs of arrays, relative to the
    largest |want| of each pair."""
    error = 0.0
    for got, want in zip(gots, wants):
        scale = max(float(np.max(np.abs(want))), 1e-30)
        error = max(error, float(np.max(np.abs(got - want))) / scale)
    return error


def largest_difference(session, wants, out_dir):
    """relative_difference of the outputs kiln-run saved in `out_dir`."""
    return relative_difference(
        (np.load(out_dir / f"{output.name}.npy") for output in session.get_outputs()),
        wants)


def cpus(threads):
    return ["taskset", "-c", f"0-{threads - 1}"]


def time_kiln(bin_dir, kmod, input_paths, threads, repeat):
    args = cpus(threads) + [str(bin_dir / "kiln-run"), str(kmod)]
    for p in input_paths:
        args += ["--input", str(p)]
    args += ["--output-dir", str(kmod.with_suffix(".timing")), "--repeat", str(repeat)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    text = subprocess.run(args, capture_output=True, text=True, env=env, check=True).stdout
    match = re.search(r"time per call: median ([0-9.e+]+) us", text)
    if not match:
        raise RuntimeError(f"kiln-run printed no timing:\n{text}")
    return float(match.group(1)) * 1e-6


ORT_TIMER = r"""
import sys, time, numpy as np, onnxruntime as ort
model, threads, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inputs = dict(np.load(sys.argv[4]))
options = ort.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 1
options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
session.run(None, inputs)
times = []
for _ in range(repeat):
    start = time.perf_counter()
    session.run(None, inputs)
    times.append(time.perf_counter() - start)
print(float(np.median(times)))
"""


def run_timer(threads, code, *args):
    """Python `code` with `args` in its own process, pinned like kiln-run;
    the finished process."""
    command = cpus(threads) + [sys.executable, "-c", code] + [str(a) for a in args]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return subprocess.run(command, capture_output=True, text=True, env=env)


def printed_seconds(process):
    """The median a timer printed last."""
    return float(process.stdout.strip().splitlines()[-1])


def time_ort(model, inputs_npz, threads, repeat):
    """ORT in its own process, pinned like kiln-run."""
    out = run_timer(threads, ORT_TIMER, model, threads, repeat, inputs_npz)
    out.check_returncode()
    return printed_seconds(out)


TORCH_TIMER = r"""
import sys, time, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import onnx_latency as bench
name, batch, threads, repeat = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
inputs, mode, saved = dict(np.load(sys.argv[6])), sys.argv[7], sys.argv[8]
torch.set_num_threads(threads)
built = bench.BUILDERS[name](batch)
module = torch.compile(built.module) if mode == "compile" else built.module
args = [torch.from_numpy(inputs[k]) for k in built.input_names]
with torch.inference_mode():
    result = module(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        module(*args)
        times.append(time.perf_counter() - start)
np.savez(saved, *[t.numpy() for t in bench.flatten(result)])
print(float(np.median(times)))
"""


def torch_version():
    import torch
    return torch.__version__


TORCH_TITLES = {"eager": "PyTorch", "compile": "torch.compile"}


def flatten(result):
    """A module's outputs (tensors, nested tuples and lists of them) in order,
    as the ONNX export lists them."""
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in flatten(r)]
    return [result]


def time_torch(name, batch, inputs_npz, threads, repeat, mode, saved):
    """PyTorch in its own process, pinned like kiln-run: the module
    `BUILDERS[name]` makes (the same weights as the exported file) under
    torch.inference_mode, eager or through torch.compile (`mode`), after
    one call (which compiles). Saves the outputs to `saved`."""
    out = run_timer(threads, TORCH_TIMER, Path(__file__).resolve().parent, name,
                    batch, threads, repeat, inputs_npz, mode, saved)
    if out.returncode:
        raise RuntimeError(f"PyTorch ({mode}) failed:\n{out.stderr[-2000:]}")
    return printed_seconds(out)


def saved_difference(wants, saved):
    """relative_difference of the arrays in the .npz `saved`, in order."""
    with np.load(saved) as got:
        return relative_difference((got[f"arr_{i}"] for i in range(len(wants))), wants)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert,lstm")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=0,
                        help="calls per round (default: about 3 s of calls)")
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work", default="/tmp/kiln-onnx-latency")
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--exporter", choices=EXPORTERS, default="dynamo",
                        help="how the files are written: torch.onnx.export's "
                             "default (dynamo, its default opset) or the "
                             "TorchScript exporter at opset 17")
    parser.add_argument("--int8", action="store_true",
                        help="also time each vision model quantized by ONNX "
                             "Runtime's static quantizer (QDQ), kiln against "
                             "ONNX Runtime on the same quantized file")
    parser.add_argument("--bf16", action="store_true",
                        help="also compile each model with --autocast=bf16 "
                             "and time it in the same rounds (its outputs' "
                             "difference from ONNX Runtime's f32 ones is "
                             "reported, not checked)")
    parser.add_argument("--torch", action="store_true",
                        help="also time each model in PyTorch (eager, "
                             "torch.inference_mode) in the same rounds")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time each model through torch.compile "
                             "(inductor; its compilation is not timed)")
    args = parser.parse_args()
    import onnx
    import onnxruntime as ort
    bin_dir = Path(args.build_dir).resolve() / "bin"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    thread_counts = [int(t) for t in args.threads.split(",")]
    torch_modes = (["eager"] if args.torch else []) + (
        ["compile"] if args.torch_compile else [])
    rows = []
    failures = 0
    opsets = set()
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            tag = f"{name}_b{batch}"
            model = work / f"{tag}.onnx"
            inputs = export(name, model, batch, args.exporter)
            opsets.update(str(o.version) for o in onnx.load(str(model)).opset_import
                          if o.domain in ("", "ai.onnx"))
            input_paths = []
            for key, value in inputs.items():
                input_paths.append(work / f"{tag}_{key}.npy")
                np.save(input_paths[-1], value)
            inputs_npz = work / f"{tag}_inputs.npz"
            np.savez(inputs_npz, **inputs)
            kmod = work / f"{tag}.kmod"
            out_dir = work / f"{tag}_out"
            failed, compile_seconds = compile_and_run(bin_dir, model, kmod, out_dir,
                                                      input_paths)
            if failed:
                print(f"{tag}: {failed}")
                failures += 1
                continue
            session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
            wants = session.run(None, inputs)
            error = largest_difference(session, wants, out_dir)
            if error > 1e-4:
                print(f"{tag}: outputs DIFFER from ONNX Runtime ({error:.2e})")
                failures += 1
                continue
            bf16 = None
            if args.bf16:
                bf16 = work / f"{tag}_bf16.kmod"
                bf16_out = work / f"{tag}_bf16_out"
                failed, _ = compile_and_run(bin_dir, model, bf16, bf16_out, input_paths,
                                            ["--autocast=bf16"])
                if failed:
                    print(f"{tag}: bf16 {failed}")
                    failures += 1
                    continue
                bf16_error = largest_difference(session, wants, bf16_out)
            int8 = None
            if args.int8 and (name in VISION or name in ("bert", "gpt2")):
                int8_model = work / f"{tag}_int8.onnx"
                quantize(model, inputs, int8_model)
                int8 = work / f"{tag}_int8.kmod"
                int8_out = work / f"{tag}_int8_out"
                failed, _ = compile_and_run(bin_dir, int8_model, int8, int8_out,
                                            input_paths)
                if failed:
                    print(f"{tag}: int8 {failed}")
                    failures += 1
                    continue
                int8_session = ort.InferenceSession(str(int8_model),
                                                    providers=["CPUExecutionProvider"])
                int8_error = largest_difference(int8_session,
                                                int8_session.run(None, inputs), int8_out)
            for threads in thread_counts:
                repeat = args.repeat
                if not repeat:
                    first = time_ort(model, inputs_npz, threads, 1)
                    repeat = max(3, min(50, int(3.0 / max(first, 1e-4))))
                kiln_times, ort_times, bf16_times = [], [], []
                int8_times, ort_int8_times = [], []
                torch_times = {mode: [] for mode in torch_modes}
                for _ in range(args.rounds):
                    kiln_times.append(time_kiln(bin_dir, kmod, input_paths, threads, repeat))
                    ort_times.append(time_ort(model, inputs_npz, threads, repeat))
                    for mode in torch_modes:
                        if torch_times[mode] is None:
                            continue
                        try:
                            torch_times[mode].append(time_torch(
                                name, batch, inputs_npz, threads, repeat, mode,
                                work / f"{tag}_{mode}.npz"))
                        except RuntimeError as failure:
                            # Reported, not counted: the goal compares
                            # with torch.compile where it compiles.
                            print(f"{tag} threads {threads}: {failure}")
                            torch_times[mode] = None
                    if bf16:
                        bf16_times.append(time_kiln(bin_dir, bf16, input_paths, threads, repeat))
                    if int8:
                        int8_times.append(time_kiln(bin_dir, int8, input_paths, threads, repeat))
                        ort_int8_times.append(time_ort(int8_model, inputs_npz, threads, repeat))
                k, o = float(np.median(kiln_times)), float(np.median(ort_times))
                b = (float(np.median(bf16_times)), bf16_error) if bf16 else None
                q = (float(np.median(int8_times)), float(np.median(ort_int8_times)),
                     int8_error) if int8 else None
                t = {mode: (float(np.median(times)),
                            saved_difference(wants, work / f"{tag}_{mode}.npz"))
                     if times else None for mode, times in torch_times.items()}
                rows.append((name, batch, threads, k, o, compile_seconds, error, b, q, t))
                print(f"{tag} threads {threads}: kiln {k * 1e3:.2f} ms, "
                      f"onnxruntime {o * 1e3:.2f} ms, kiln/ort {k / o:.2f} "
                      f"(compile {compile_seconds:.1f} s, max rel. diff {error:.1e})"
                      + (f"; bf16 {b[0] * 1e3:.2f} ms, f32/bf16 {k / b[0]:.2f}, "
                         f"rel. diff {b[1]:.1e}" if b else "")
                      + (f"; int8 {q[0] * 1e3:.2f} ms, onnxruntime int8 {q[1] * 1e3:.2f} ms, "
                         f"kiln/ort {q[0] / q[1]:.2f}, rel. diff {q[2]:.1e}" if q else "")
                      + "".join(f"; PyTorch {mode} {v[0] * 1e3:.2f} ms, kiln/PyTorch "
                                f"{k / v[0]:.2f}, rel. diff {v[1]:.1e}" if v else
                                f"; PyTorch {mode} failed" for mode, v in t.items()),
                      flush=True)
    table = ["| model | batch | threads | kiln (ms) | ONNX Runtime (ms) | kiln / ORT "
             "| kiln compile (s) | max rel. diff |"
             + (" kiln bf16 (ms) | f32 / bf16 | bf16 rel. diff |" if args.bf16 else "")
             + (" kiln int8 (ms) | ORT int8 (ms) | kiln / ORT int8 | int8 rel. diff |"
                if args.int8 else ""),
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
             + (" ---: | ---: | ---: |" if args.bf16 else "")
             + (" ---: | ---: | ---: | ---: |" if args.int8 else "")]
    for mode in torch_modes:
        title = TORCH_TITLES[mode]
        table[0] += f" {title} (ms) | kiln / {title} | {title} rel. diff |"
        table[1] += " ---: | ---: | ---: |"
    for name, batch, threads, k, o, c, e, b, q, t in rows:
        table.append(f"| {name} | {batch} | {threads} | {k * 1e3:.2f} | {o * 1e3:.2f} "
                     f"| {k / o:.2f} | {c:.1f} | {e:.1e} |"
                     + (f" {b[0] * 1e3:.2f} | {k / b[0]:.2f} | {b[1]:.1e} |" if b else
                        " | | |" if args.bf16 else "")
                     + (f" {q[0] * 1e3:.2f} | {q[1] * 1e3:.2f} | {q[0] / q[1]:.2f} | {q[2]:.1e} |"
                        if q else " | | | |" if args.int8 else "")
                     + "".join(f" {v[0] * 1e3:.2f} | {k / v[0]:.2f} | {v[1]:.1e} |"
                               if v else " failed | | |" for v in t.values()))
    print("\n".join(table))
    if args.markdown:
        Path(args.markdown).write_text(
            f"ONNX models, kiln against ONNX Runtime {ort.__version__}"
            + (f" and PyTorch {torch_version()}" if torch_modes else "") + " "
            f"(`{' '.join(sys.argv)}`; files by the {args.exporter} exporter, "
            f"opset {', '.join(sorted(opsets))}; median of {args.rounds} rounds)\n\n"
            + "\n".join(table) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
