"""GridSample against PyTorch's torch.nn.functional.grid_sample, an
implementation nobody here wrote: every mode (nearest, linear, cubic) with
every padding mode (zeros, border, reflection), both align_corners, on
4-d inputs, and nearest and linear on 5-d ones (opset 20), with grid
points up to 1.6 times outside the input so that padding and repeated
reflection are exercised. Each case is a one-node model through kiln-compile
and kiln-run; 1e-5 of the largest value. Needs torch (the benchmark
virtualenv).

    check_grid_sample.py BIN_DIR WORK_DIR
"""
import itertools
import sys
from pathlib import Path

import numpy as np
import torch
from onnx import TensorProto, helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261126)
TORCH_MODE = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}


def case(name, x, grid, mode, padding, align):
    graph = helper.make_graph(
        [helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode,
                          padding_mode=padding, align_corners=int(align))],
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       [x.shape[0], x.shape[1], *grid.shape[1:-1]])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    model.ir_version = 10
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    got = model_files.compile_and_run(bin_dir, work, name, path, [x, grid])
    want = torch.nn.functional.grid_sample(
        torch.from_numpy(x).double(), torch.from_numpy(grid).double(),
        mode=TORCH_MODE[mode], padding_mode=padding, align_corners=align).numpy()
    error = float(np.max(np.abs(got - want))) if got.shape == want.shape else np.inf
    good = error <= 1e-5 * float(np.max(np.abs(want)))
    print(f"{name}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
    return good


ok = True
x4 = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
g4 = rng.uniform(-1.6, 1.6, (2, 4, 6, 2)).astype(np.float32)
for mode, padding, align in itertools.product(("nearest", "linear", "cubic"),
                                              ("zeros", "border", "reflection"),
                                              (False, True)):
    ok &= case(f"{mode}_{padding}_{'aligned' if align else 'unaligned'}",
               x4, g4, mode, padding, align)
x5 = rng.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
g5 = rng.uniform(-1.6, 1.6, (1, 2, 3, 4, 3)).astype(np.float32)
for mode, padding, align in itertools.product(("nearest", "linear"),
                                              ("zeros", "border", "reflection"),
                                              (False, True)):
    ok &= case(f"volumetric_{mode}_{padding}_{'aligned' if align else 'unaligned'}",
               x5, g5, mode, padding, align)
sys.exit(0 if ok else 1)
