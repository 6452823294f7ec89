"""Real ONNX models through kiln, checked against ONNX Runtime.

Exports torchvision architectures with random weights (nothing is
downloaded) to ONNX with torch.onnx.export, compiles each with
kiln-compile, runs it with kiln-run on a random input, runs the same file
with ONNX Runtime, and prints the compile time and the largest difference
relative to the largest output. Needs the benchmark virtualenv
(bench/setup-anchors.sh) with torchvision:

    /work/bench-venv/bin/python -m pip install torchvision
    /work/bench-venv/bin/python bench/onnx_models.py --build-dir build [--work DIR] [MODEL...]

`--target cuda-on-cpu` compiles for the CUDA backend with its kernels run
on the host (kiln-compile --target=cuda-on-cpu): the kernels it generates
for each model, checked against ONNX Runtime without a GPU.

Models default to resnet50, mobilenet_v2, squeezenet1_0, densenet121,
inception_v3, shufflenet_v2_x1_0 and vgg11. Exit status 1 when a model
fails to compile or run, or differs by more than 1e-4 (relative).
"""
import argparse
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--work", default="/tmp/kiln-onnx-models")
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda-on-cpu"],
                        help="kiln-compile's --target")
    args = parser.parse_args()
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
        compiled = subprocess.run([bin_dir / "kiln-compile", model, f"--target={args.target}",
                                   "-o", work / f"{name}.kmod"],
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
