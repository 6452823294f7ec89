"""Compiles examples/onnx/fixed_point.onnx with kiln-compile, runs it with
kiln-run on random inputs for several batch sizes, and compares the outputs
with a numpy implementation of the model (weights read with the onnx
package): the fixed-point iteration h <- tanh(h W + x) until the largest
change is below 1e-5 (at most 100 steps), then h or -h by the sign of sum(h).

    check_fixed_point.py MODEL BIN_DIR WORK_DIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

model_path, bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)
weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model_path)).graph.initializer}
w, tol = weights["W"], weights["tol"]


def reference(x):
    h = np.zeros_like(x)
    steps = 0
    for _ in range(100):
        nxt = np.tanh(h @ w + x).astype(np.float32)
        change = np.max(np.abs(nxt - h))
        h, steps = nxt, steps + 1
        if change < tol:
            break
    return (h if h.sum() > 0 else -h), steps


rng = np.random.default_rng(0)
for batch in (1, 3, 8):
    kmod = work / f"fixed_point_{batch}.kmod"
    subprocess.run([bin_dir / "kiln-compile", model_path, "--input-shape",
                    f"x={batch}x4", "-o", kmod], check=True)
    for trial in range(3):
        x = rng.uniform(-2, 2, (batch, 4)).astype(np.float32)
        np.save(work / "x.npy", x)
        out = work / f"out_{batch}_{trial}"
        subprocess.run([bin_dir / "kiln-run", kmod, "--input", work / "x.npy",
                        "--output-dir", out], check=True)
        y, steps = np.load(out / "y.npy"), np.load(out / "steps.npy")
        want_y, want_steps = reference(x)
        if int(steps) != want_steps or not np.allclose(y, want_y, rtol=1e-4, atol=1e-5):
            sys.exit(f"batch {batch} trial {trial}: kiln gave steps={steps}, "
                     f"y={y}; numpy gives steps={want_steps}, y={want_y}")
print("fixed_point.onnx: kiln matches numpy for batch 1, 3 and 8")
