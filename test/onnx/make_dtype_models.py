"""Writes the ONNX models that test/tools/onnx-import-dtypes.test imports:
integer initializers in each of TensorProto's storage fields, and a
QuantizeLinear whose per-axis scale does not fit its input.

    make_dtype_models.py OUT_DIR        (Debian's python3 with python3-onnx)
"""
import sys
from pathlib import Path

from onnx import TensorProto, helper

import model_files

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def save(name, nodes, inputs, outputs, initializer=(), opset=13, check=True):
    model_files.save(out, name, nodes, inputs, outputs, initializer, opset, check)


def field_tensor(name, data_type, dims, field, values):
    """A TensorProto holding `values` in the repeated field `field`
    (int32_data or uint64_data), not in raw_data."""
    tensor = TensorProto()
    tensor.name = name
    tensor.data_type = data_type
    tensor.dims.extend(dims)
    getattr(tensor, field).extend(values)
    return tensor


# uint8 and int8 live in int32_data (one value per entry), uint32 and uint64
# in uint64_data. Each initializer is added to a scalar input (Add takes
# the 8-bit types from opset 14).
save("integer_fields",
     [helper.make_node("Add", ["a", "ka"], ["sa"]),
      helper.make_node("Add", ["c", "kc"], ["sc"]),
      helper.make_node("Add", ["b", "kb"], ["sb"]),
      helper.make_node("Add", ["d", "kd"], ["sd"])],
     [helper.make_tensor_value_info("a", TensorProto.UINT8, []),
      helper.make_tensor_value_info("c", TensorProto.INT8, []),
      helper.make_tensor_value_info("b", TensorProto.UINT32, []),
      helper.make_tensor_value_info("d", TensorProto.UINT64, [])],
     [helper.make_tensor_value_info("sa", TensorProto.UINT8, [3]),
      helper.make_tensor_value_info("sc", TensorProto.INT8, [2]),
      helper.make_tensor_value_info("sb", TensorProto.UINT32, [2]),
      helper.make_tensor_value_info("sd", TensorProto.UINT64, [1])],
     [field_tensor("ka", TensorProto.UINT8, [3], "int32_data", [1, 200, 255]),
      field_tensor("kc", TensorProto.INT8, [2], "int32_data", [-128, 5]),
      field_tensor("kb", TensorProto.UINT32, [2], "uint64_data",
                   [4000000000, 7]),
      field_tensor("kd", TensorProto.UINT64, [1], "uint64_data",
                   [18446744073709551615])],
     opset=14)

# A per-axis scale of 4 entries for an axis of 3.
save("quantize_axis_mismatch",
     [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)],
     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
      helper.make_tensor_value_info("s", TensorProto.FLOAT, [4]),
      helper.make_tensor_value_info("z", TensorProto.UINT8, [4])],
     [helper.make_tensor_value_info("y", TensorProto.UINT8, [2, 3])],
     check=False)

# BitShift takes unsigned integers only.
save("bitshift_float",
     [helper.make_node("BitShift", ["x", "n"], ["y"], direction="LEFT")],
     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
      helper.make_tensor_value_info("n", TensorProto.FLOAT, [2])],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
     check=False, opset=11)
