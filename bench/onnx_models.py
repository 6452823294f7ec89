"""Real ONNX models through kiln, checked against ONNX Runtime.

Exports torchvision architectures with random weights (nothing is
downloaded) to ONNX with torch.onnx.export, compiles each with
kiln-compile, runs it with kiln-run on a random input, runs the same file
with ONNX Runtime, and prints the compile time and the largest difference
relative to the largest output. Needs the benchmark virtualenv
(bench/setup-anchors.sh) with torchvision:

    /work/bench-venv/bin/python -m pip install torchvision
    /work/bench-venv/bin/python bench/onnx_models.py --build-dir build [--work DIR] [MODEL...]

Models default to resnet50, mobilenet_v2, squeezenet1_0, densenet121,
inception_v3, shufflenet_v2_x1_0 and vgg11. Exit status 1 when a model
fails to compile or run, or differs by more than 1e-4 (relative).

With --lstm, times a 2-layer torch.nn.LSTM instead (input 256, hidden 512,
sequence 128, batch 1 and 8; ONNX opset 17): the compile time, then the
latency of one call through kiln-run --repeat and through ONNX Runtime with
the same number of threads (OMP_NUM_THREADS for kiln, intra_op_num_threads
for ONNX Runtime; --threads, default 1 and 2), each the median over
--rounds runs of the median call, and the outputs compared like the
models':

    /work/bench-venv/bin/python bench/onnx_models.py --build-dir build --lstm
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_0", "densenet121",
          "inception_v3", "shufflenet_v2_x1_0", "vgg11"]


def export(name, path):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    size = 299 if name == "inception_v3" else 224
    x = torch.randn(1, 3, size, size)
    torch.onnx.export(model, (x,), str(path), input_names=["input"],
                      output_names=["logits"], opset_version=13, dynamo=False)
    return size


LSTM_INPUT, LSTM_HIDDEN, LSTM_SEQ = 256, 512, 128


def export_lstm(path, batch):
    import torch
    torch.manual_seed(0)
    net = torch.nn.LSTM(LSTM_INPUT, LSTM_HIDDEN, num_layers=2).eval()
    x = torch.randn(LSTM_SEQ, batch, LSTM_INPUT)
    torch.onnx.export(net, (x,), str(path), input_names=["x"],
                      output_names=["y", "h_n", "c_n"], opset_version=17, dynamo=False)
    return x.numpy()


def bench_lstm(bin_dir, work, threads_list, rounds, calls):
    """Prints a table of compile time and latency, kiln against ONNX Runtime;
    returns the number of batch sizes whose outputs differ."""
    import onnxruntime as ort
    failures = 0
    rows = []
    for batch in (1, 8):
        model = work / f"lstm_b{batch}.onnx"
        x = export_lstm(model, batch)
        np.save(work / f"lstm_b{batch}_x.npy", x)
        kmod = work / f"lstm_b{batch}.kmod"
        start = time.time()
        subprocess.run([bin_dir / "kiln-compile", model, "-o", kmod], check=True)
        compile_s = time.time() - start
        out = work / f"lstm_b{batch}_out"
        for threads in threads_list:
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            kiln_ms = []
            for _ in range(rounds):
                text = subprocess.run(
                    [bin_dir / "kiln-run", kmod, "--input", work / f"lstm_b{batch}_x.npy",
                     "--output-dir", out, "--repeat", str(calls)],
                    check=True, capture_output=True, text=True, env=env).stdout
                kiln_ms.append(float(re.search(r"median ([0-9.]+) us", text).group(1)) / 1e3)
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            session = ort.InferenceSession(str(model), options,
                                           providers=["CPUExecutionProvider"])
            want = session.run(None, {"x": x})
            ort_ms = []
            for _ in range(rounds):
                times = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    session.run(None, {"x": x})
                    times.append((time.perf_counter() - t0) * 1e3)
                ort_ms.append(statistics.median(times))
            error = max(float(np.max(np.abs(np.load(out / f"{n}.npy") - w))) /
                        max(float(np.max(np.abs(w))), 1e-30)
                        for n, w in zip(["y", "h_n", "c_n"], want))
            failures += error > 1e-4
            k, o = statistics.median(kiln_ms), statistics.median(ort_ms)
            rows.append(f"| {batch} | {threads} | {compile_s:.1f} | {k:.2f} | {o:.2f} | "
                        f"{k / o:.2f} | {error:.1e} |")
    print(f"2-layer LSTM, input {LSTM_INPUT}, hidden {LSTM_HIDDEN}, sequence {LSTM_SEQ}; "
          f"medians of {rounds} rounds of {calls} calls\n")
    print("| batch | threads | kiln compile (s) | kiln (ms) | ONNX Runtime (ms) | "
          "kiln / ORT | max rel. diff |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work", default="/tmp/kiln-onnx-models")
    parser.add_argument("--lstm", action="store_true",
                        help="time the LSTM against ONNX Runtime instead")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    if args.lstm:
        work = Path(args.work)
        work.mkdir(parents=True, exist_ok=True)
        bin_dir = Path(args.build_dir).resolve() / "bin"
        return 1 if bench_lstm(bin_dir, work, args.threads, args.rounds, args.calls) else 0
    import onnxruntime as ort
    bin_dir = Path(args.build_dir).resolve() / "bin"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    failures = 0
    for name in args.models:
        model = work / f"{name}.onnx"
        size = export(name, model)
        x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
        np.save(work / f"{name}_x.npy", x)
        start = time.time()
        compiled = subprocess.run([bin_dir / "kiln-compile", model, "-o", work / f"{name}.kmod"],
                                  capture_output=True, text=True)
        seconds = time.time() - start
        if compiled.returncode:
            print(f"{name}: compile FAILED: {compiled.stderr.strip()[:400]}")
            failures += 1
            continue
        ran = subprocess.run([bin_dir / "kiln-run", work / f"{name}.kmod", "--input",
                              work / f"{name}_x.npy", "--output-dir", work / f"{name}_out"],
                             capture_output=True, text=True)
        if ran.returncode:
            print(f"{name}: run FAILED: {ran.stderr.strip()[:400]}")
            failures += 1
            continue
        got = np.load(work / f"{name}_out" / "logits.npy")
        want = ort.InferenceSession(str(model)).run(None, {"input": x})[0]
        scale = max(float(np.max(np.abs(want))), 1e-30)
        error = float(np.max(np.abs(got - want))) / scale
        ok = error <= 1e-4
        failures += not ok
        print(f"{name}: compile {seconds:.1f} s, max |kiln - onnxruntime| / max |onnxruntime| "
              f"= {error:.2e} {'ok' if ok else 'DIFFERS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
