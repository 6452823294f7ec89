"""Writes the models and .npy files that test/tools/onnx-bind-input.test
binds inputs of with --bind-input, into the directory given.

    make_bind_models.py OUT_DIR        (Debian's python3 with python3-onnx)
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

import model_files

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
F, I64 = TensorProto.FLOAT, TensorProto.INT64

# A Reshape whose target shape is a graph input.
model_files.save(out, "reshape_by_input",
                 [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                 [helper.make_tensor_value_info("x", F, [2, 6]),
                  helper.make_tensor_value_info("shape", I64, [2])],
                 [helper.make_tensor_value_info("y", F, ["rows", "cols"])], check=False)

# x scaled by a factor and shifted by an offset vector, both graph inputs
# with no declared shape: a literal of one number is a scalar, of several a
# vector.
model_files.save(out, "affine_by_input",
                 [helper.make_node("Mul", ["x", "factor"], ["t"], name="scale"),
                  helper.make_node("Add", ["t", "offset"], ["y"], name="shift")],
                 [helper.make_tensor_value_info("x", F, [2, 3]),
                  helper.make_tensor_value_info("factor", F, None),
                  helper.make_tensor_value_info("offset", F, None)],
                 [helper.make_tensor_value_info("y", F, [2, 3])], check=False)

np.save(out / "shape_3x4.npy", np.array([3, 4], np.int64))
np.save(out / "shape_int32.npy", np.array([3, 4], np.int32))
np.save(out / "shape_long.npy", np.array([3, 2, 2], np.int64))
np.save(out / "x.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
np.save(out / "x23.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
