"""Checks kiln on the committed recurrent models of test/onnx/recurrent.

Each folder holds a torch.nn.LSTM, GRU or RNN exported to ONNX, its inputs
(input_<k>_<name>.npy, in the graph's input order) and ONNX Runtime's
outputs (expected_<name>.npy), all written by recurrent_ort.py --write.
Compiles each model with kiln-compile, runs it with kiln-run and compares
every output: |kiln - ort| <= 1e-4 * max |ort| + 1e-6. Needs only numpy.

    check_recurrent.py DATA_DIR BIN_DIR WORK_DIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np

data, bin_dir, work = (Path(a) for a in sys.argv[1:4])
work.mkdir(parents=True, exist_ok=True)
cases = sorted(p for p in data.iterdir() if (p / "model.onnx").exists())
if not cases:
    sys.exit(f"no models under {data}")
failures = 0
for case in cases:
    kmod = work / f"{case.name}.kmod"
    subprocess.run([bin_dir / "kiln-compile", case / "model.onnx", "-o", kmod], check=True)
    args = [bin_dir / "kiln-run", kmod]
    for path in sorted(case.glob("input_*.npy"), key=lambda p: int(p.name.split("_")[1])):
        args += ["--input", path]
    out = work / f"{case.name}_out"
    subprocess.run(args + ["--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    expected = sorted(case.glob("expected_*.npy"))
    if not expected:
        sys.exit(f"{case}: no expected outputs")
    for path in expected:
        name = path.stem[len("expected_"):]
        want, got = np.load(path), np.load(out / f"{name}.npy")
        error = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
        if not error <= 1e-4 * float(np.max(np.abs(want))) + 1e-6:
            print(f"{case.name}: output {name} differs from ONNX Runtime's by {error:.2e} "
                  f"(shapes {got.shape}, {want.shape})")
            failures += 1
print(f"{len(cases)} recurrent models checked against ONNX Runtime's outputs, "
      f"{failures} outputs differ")
sys.exit(1 if failures else 0)
