#!/usr/bin/env python3
"""Times kiln's pooling (kiln.reduce_window) against ONNX Runtime and numpy.

Three workloads: a 3x3 max pool with stride 2 and padding 1 on 1x64x112x112
and on 8x64x112x112 f32 (ResNet's first pool), and a 7x7 global average pool
on 8x2048x7x7 (ResNet's last). kiln is compiled with kiln-compile and timed
with kiln-run --repeat (median of the calls after the first, which includes
allocating the output); its first call's output is checked against numpy.
ONNX Runtime (MaxPool, GlobalAveragePool; where the python running this has
it, e.g. /work/bench-venv/bin/python) and numpy (a max/sum over the nine
strided views of the padded input, and a mean) are timed as medians of
repeated calls after a warm-up. Every system gets --threads threads.

    /work/bench-venv/bin/python bench/pooling.py --threads 1
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np


def max_pool_ir(n):
    return f"""
func.func @pool(%x: tensor<{n}x64x112x112xf32>) -> tensor<{n}x64x56x56xf32> {{
  %y = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<{n}x64x112x112xf32>
  return %y : tensor<{n}x64x56x56xf32>
}}
"""


GLOBAL_AVG_IR = """
func.func @pool(%x: tensor<8x2048x7x7xf32>) -> tensor<8x2048x1x1xf32> {
  %s = kiln.reduce_window %x, kind = sum, window = [1, 1, 7, 7], strides = [1, 1, 1, 1], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<8x2048x7x7xf32>
  %n = kiln.constant dense<49.0> : tensor<8x2048x1x1xf32>
  %a = kiln.div %s, %n : tensor<8x2048x1x1xf32>
  return %a : tensor<8x2048x1x1xf32>
}
"""


def numpy_max_pool(x):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    h, w = x.shape[2] // 2, x.shape[3] // 2
    out = None
    for i in range(3):
        for j in range(3):
            view = padded[:, :, i:i + 2 * h:2, j:j + 2 * w:2]
            out = view.copy() if out is None else np.maximum(out, view)
    return out


def numpy_global_avg(x):
    return x.mean(axis=(2, 3), keepdims=True, dtype=np.float32)


def ort_session(kind, shape, threads):
    try:
        import onnx
        from onnx import TensorProto, helper
        import onnxruntime as ort
    except ImportError:
        return None
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    if kind == "max":
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                strides=[2, 2], pads=[1, 1, 1, 1])
    else:
        node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
    graph = helper.make_graph([node], "pool", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return lambda data: session.run(None, {"x": data})[0]


def median_seconds(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2], times[0]


def run_kiln(build, work, name, ir, x, expected, threads, repeat):
    source = os.path.join(work, name + ".mlir")
    module = os.path.join(work, name + ".kmod")
    data = os.path.join(work, name + ".npy")
    out = os.path.join(work, name + "-out")
    with open(source, "w") as f:
        f.write(ir)
    np.save(data, x)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    subprocess.run([os.path.join(build, "bin", "kiln-compile"), source, "-o", module],
                   check=True, env=env)
    text = subprocess.run([os.path.join(build, "bin", "kiln-run"), module, "--input", data,
                           "--output-dir", out, "--repeat", str(repeat)],
                          check=True, env=env, capture_output=True, text=True).stdout
    got = np.load(os.path.join(out, "out0.npy"))
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        raise SystemExit(f"{name}: kiln's output differs from numpy's")
    match = re.search(r"median ([0-9.]+) us \(min ([0-9.]+) us", text)
    return float(match.group(1)) * 1e-6, float(match.group(2)) * 1e-6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--build-dir", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build"))
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    workloads = [
        ("maxpool_1x64x112x112", "max", (1, 64, 112, 112), max_pool_ir(1), numpy_max_pool),
        ("maxpool_8x64x112x112", "max", (8, 64, 112, 112), max_pool_ir(8), numpy_max_pool),
        ("global_avgpool_8x2048x7x7", "avg", (8, 2048, 7, 7), GLOBAL_AVG_IR, numpy_global_avg),
    ]
    print(f"threads: {args.threads}; medians (min) of {args.repeat} calls in ms")
    print(f"{'workload':28} {'kiln':>16} {'onnxruntime':>16} {'numpy':>16}")
    with tempfile.TemporaryDirectory() as work:
        for name, kind, shape, ir, reference in workloads:
            x = rng.uniform(-2, 2, size=shape).astype(np.float32)
            expected = reference(x)
            kiln = run_kiln(args.build_dir, work, name, ir, x, expected,
                            args.threads, args.repeat)
            session = ort_session(kind, shape, args.threads)
            ort = None
            if session:
                if not np.allclose(session(x), expected, rtol=1e-5, atol=1e-6):
                    raise SystemExit(f"{name}: ONNX Runtime's output differs from numpy's")
                ort = median_seconds(lambda: session(x), args.repeat)
            npy = median_seconds(lambda: reference(x), args.repeat)
            cell = lambda t: "absent" if t is None else f"{t[0] * 1e3:.3f} ({t[1] * 1e3:.3f})"
            print(f"{name:28} {cell(kiln):>16} {cell(ort):>16} {cell(npy):>16}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
