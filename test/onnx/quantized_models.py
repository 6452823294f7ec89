"""Models quantized by ONNX Runtime's static quantizer, through kiln and ONNX
Runtime.

Exports torchvision models with random weights and normalization
statistics from a fresh seed (printed, and accepted back with --seed) the
default way (torch.onnx.export(...,
dynamo=True)), quantizes each with onnxruntime.quantization.quantize_static
in its default QDQ form (uint8 activations, int8 weights, calibrated on
four random images), compiles the quantized file with kiln-compile (no
flags), runs it with kiln-run and compares the outputs with ONNX Runtime's
on the same file and inputs, evaluated node by node (graph optimizations
off: DequantizeLinear, the float operator, QuantizeLinear, as the standard
defines them). The two requantize in their own orders, so a value at a
rounding tie can land one quantization step apart and the step
propagates: the check is |kiln - ort| <= 5e-2 * max |ort|, far below what a
wrong scale, zero point, bias or table gives. Also prints how far ONNX
Runtime's fused int8 kernels are from both (on a CPU without VNNI they sum
pairs of uint8 x int8 products in saturating int16, as ONNX Runtime's
quantization guide warns, and land up to ~5e-2 away from the file's
meaning) and whether kiln's convolutions ran on the int8 entry (only on
CPUs with VNNI).

    quantized_models.py BIN_DIR WORK_DIR [--seed N] [--models a,b,...]

Needs torch, torchvision, onnxscript and onnxruntime (the benchmark
virtualenv, bench/setup-anchors.sh); exits 77 (ctest's SKIP) without them.
"""
import argparse
import subprocess
import sys
from pathlib import Path

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torchvision
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    import model_files
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

MODELS = ["resnet18", "mobilenet_v3_small", "efficientnet_b0"]
SIZE = 64


class Images(CalibrationDataReader):
    def __init__(self, name, rng):
        self.batches = [{name: rng.standard_normal((1, 3, SIZE, SIZE)).astype(np.float32)}
                        for _ in range(4)]

    def get_next(self):
        return self.batches.pop() if self.batches else None


def quantized(name, work, seed):
    """The file of model `name` quantized, and an input for it."""
    torch.manual_seed(seed)
    module = getattr(torchvision.models, name)().eval()
    # Random normalization statistics, so that the convolutions the
    # exporter folds them into have biases (torchvision starts them at 0).
    for layer in module.modules():
        if isinstance(layer, torch.nn.BatchNorm2d):
            with torch.no_grad():
                layer.running_mean.normal_(0, 0.5)
                layer.running_var.uniform_(0.5, 2.0)
                layer.weight.uniform_(0.5, 1.5)
                layer.bias.normal_(0, 0.5)
    x = torch.randn(1, 3, SIZE, SIZE)
    path = work / f"{name}.onnx"
    with torch.no_grad():
        torch.onnx.export(module, (x,), str(path), dynamo=True,
                          external_data=False, verbose=False)
    prepared = work / f"{name}.pre.onnx"
    quant_pre_process(str(path), str(prepared))
    input_name = ort.InferenceSession(str(prepared)).get_inputs()[0].name
    result = work / f"{name}.int8.onnx"
    quantize_static(str(prepared), str(result),
                    Images(input_name, np.random.default_rng(seed)),
                    quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return result, input_name, x.numpy()


def reference(model, input_name, x, level):
    """ONNX Runtime's outputs of `model` on `x` (name -> array) at graph
    optimization `level`."""
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(None, {input_name: x})))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bin_dir", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
    print(f"seed {seed} (rerun with --seed {seed}); torch {torch.__version__}, "
          f"onnxruntime {ort.__version__}")
    failures = 0
    for i, name in enumerate(args.models.split(",")):
        model, input_name, x = quantized(name, args.work, seed + i)
        out, error = model_files.run_kiln(args.bin_dir, model, [x], args.work)
        if error:
            print(f"{name}: FAILED {error}")
            failures += 1
            continue
        ir = subprocess.run([args.bin_dir / "kiln-compile", model, "--emit=mlir", "-o", "-"],
                            capture_output=True, text=True).stdout
        int8 = ir.count("llvm.call @kiln_dnnl_conv_int8(")
        want = reference(model, input_name, x, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        fused = reference(model, input_name, x, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
        worst = fused_off = 0.0
        for output in want:
            got = np.load(out / f"{output}.npy")
            scale = max(float(np.max(np.abs(want[output]))), 1e-30)
            worst = max(worst, float(np.max(np.abs(got - want[output]))) / scale)
            fused_off = max(fused_off,
                            float(np.max(np.abs(fused[output] - want[output]))) / scale)
        verdict = "ok" if worst <= 5e-2 else "FAILED"
        failures += verdict != "ok"
        print(f"{name}: {verdict}, max |kiln - ort| / max |ort| = {worst:.1e} "
              f"(ONNX Runtime's fused int8 kernels: {fused_off:.1e}), "
              f"{int8} int8 convolution calls")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
