"""torch.nn.LSTM, GRU and RNN exported to ONNX, through kiln and ONNX Runtime.

Exports each recurrent network (2 layers, bidirectional or not, batch_first
either way, with initial states as inputs) with torch.onnx.export at opset
17 (Debian's ONNX 1.12 reads up to 17), with weights and inputs drawn from
a fresh seed (printed, and accepted back with --seed), compiles it with
kiln-compile, runs it with kiln-run and compares every output with ONNX
Runtime's: |kiln - ort| <= 1e-4 * max |ort| + 1e-6.

    recurrent_ort.py BIN_DIR WORK_DIR [--seed N]
    recurrent_ort.py BIN_DIR WORK_DIR --write DIR

--write saves small versions of the models, their inputs and ONNX
Runtime's outputs under DIR (test/onnx/recurrent), which check_recurrent.py
checks where torch and ONNX Runtime are not installed. Needs torch,
onnxruntime and numpy (the benchmark virtualenv, /work/bench-venv); exits
77 (ctest's SKIP) without them.
"""
import argparse
import subprocess
import sys
from pathlib import Path

try:
    import numpy as np
    import onnxruntime as ort
    import torch
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

# name: (torch module, extra arguments, bidirectional, batch_first)
CASES = {
    "lstm_bidir_seq_first": ("LSTM", {}, True, False),
    "lstm_bidir_batch_first": ("LSTM", {}, True, True),
    "lstm_forward_batch_first": ("LSTM", {}, False, True),
    "gru_bidir_seq_first": ("GRU", {}, True, False),
    "gru_bidir_batch_first": ("GRU", {}, True, True),
    "rnn_tanh_bidir_batch_first": ("RNN", {"nonlinearity": "tanh"}, True, True),
    "rnn_relu_bidir_seq_first": ("RNN", {"nonlinearity": "relu"}, True, False),
}


def export(case, path, seed, input_size, hidden, seq, batch):
    kind, extra, bidirectional, batch_first = CASES[case]
    torch.manual_seed(seed)
    net = getattr(torch.nn, kind)(input_size, hidden, num_layers=2,
                                  bidirectional=bidirectional,
                                  batch_first=batch_first, **extra).eval()
    dirs = 2 if bidirectional else 1
    x = torch.randn((batch, seq, input_size) if batch_first else (seq, batch, input_size))
    h0 = torch.randn(2 * dirs, batch, hidden)
    inputs = {"x": x, "h0": h0}
    outputs = ["y", "h_n"]
    if kind == "LSTM":
        inputs["c0"] = torch.randn(2 * dirs, batch, hidden)
        outputs.append("c_n")
        args = (x, (h0, inputs["c0"]))
    else:
        args = (x, h0)
    torch.onnx.export(net, args, str(path), input_names=list(inputs),
                      output_names=outputs, opset_version=17, dynamo=False)
    return {k: v.numpy() for k, v in inputs.items()}


def run_kiln(bin_dir, model, inputs, work):
    kmod = work / (model.stem + ".kmod")
    subprocess.run([bin_dir / "kiln-compile", model, "-o", kmod], check=True)
    args = [bin_dir / "kiln-run", kmod]
    for name, value in inputs.items():
        np.save(work / f"{model.stem}_{name}.npy", value)
        args += ["--input", work / f"{model.stem}_{name}.npy"]
    out = work / (model.stem + "_out")
    subprocess.run(args + ["--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    return out


def compare(case, got_dir, want):
    ok = True
    for name, expected in want.items():
        got = np.load(got_dir / f"{name}.npy")
        if got.shape != expected.shape:
            print(f"{case}: output {name} has shape {got.shape}, ONNX Runtime's {expected.shape}")
            ok = False
            continue
        scale = float(np.max(np.abs(expected)))
        error = float(np.max(np.abs(got - expected)))
        good = error <= 1e-4 * scale + 1e-6
        ok &= good
        print(f"{case}: {name} {list(expected.shape)} max |kiln - ort| = {error:.2e} "
              f"(max |ort| {scale:.2f}) {'ok' if good else 'DIFFERS'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bin_dir", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.write:
        # Small models whose .onnx files are a few kilobytes.
        seed, sizes = 20261122, dict(input_size=3, hidden=4, seq=5, batch=2)
    else:
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
        sizes = dict(input_size=10, hidden=16, seq=9, batch=3)
        print(f"seed {seed} (rerun with --seed {seed})")
    ok = True
    for i, case in enumerate(CASES):
        model = args.work / f"{case}.onnx"
        inputs = export(case, model, seed + i, **sizes)
        session = ort.InferenceSession(str(model))
        names = [o.name for o in session.get_outputs()]
        want = dict(zip(names, session.run(None, inputs)))
        if args.write:
            folder = args.write / case
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "model.onnx").write_bytes(model.read_bytes())
            for k, (name, value) in enumerate(inputs.items()):
                np.save(folder / f"input_{k}_{name}.npy", value)
            for name, value in want.items():
                np.save(folder / f"expected_{name}.npy", value)
            print(f"{case}: wrote {folder}")
            continue
        ok &= compare(case, run_kiln(args.bin_dir, model, inputs, args.work), want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
