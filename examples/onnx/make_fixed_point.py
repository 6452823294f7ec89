"""Writes fixed_point.onnx, the ONNX example of the README.

The model iterates h <- tanh(h @ W + x) from h = 0 until the largest change
is below 1e-5 or 100 iterations have run (an ONNX Loop whose exit depends on
the data, which kiln compiles to kiln.while), then an If picks h or -h by
the sign of its sum (kiln.cond). The batch dim of x is symbolic ('batch'),
so compiling it needs --input-shape x=Nx4.

    python3 make_fixed_point.py      # needs the onnx package (pip)
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = (rng.standard_normal((4, 4)) * 0.4).astype(np.float32)

body = helper.make_graph(
    [
        helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
        helper.make_node("Add", ["hw", "x"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
        helper.make_node("Sub", ["h_out", "h_in"], ["delta"]),
        helper.make_node("Abs", ["delta"], ["abs_delta"]),
        helper.make_node("ReduceMax", ["abs_delta"], ["change"], keepdims=0),
        helper.make_node("Less", ["change", "tol"], ["converged"]),
        helper.make_node("Not", ["converged"], ["cond_out"]),
        helper.make_node("Add", ["steps_in", "one"], ["steps_out"]),
    ],
    "fixed_point_step",
    [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_in", TensorProto.FLOAT, ["batch", 4]),
        helper.make_tensor_value_info("steps_in", TensorProto.INT64, []),
    ],
    [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_out", TensorProto.FLOAT, ["batch", 4]),
        helper.make_tensor_value_info("steps_out", TensorProto.INT64, []),
    ],
)

then_branch = helper.make_graph(
    [helper.make_node("Identity", ["h"], ["picked_then"])], "keep", [],
    [helper.make_tensor_value_info("picked_then", TensorProto.FLOAT, ["batch", 4])])
else_branch = helper.make_graph(
    [helper.make_node("Neg", ["h"], ["picked_else"])], "negate", [],
    [helper.make_tensor_value_info("picked_else", TensorProto.FLOAT, ["batch", 4])])

graph = helper.make_graph(
    [
        helper.make_node("Mul", ["x", "zero"], ["h0"]),
        helper.make_node("Loop", ["max_trips", "", "h0", "steps0"],
                         ["h", "steps"], body=body),
        helper.make_node("ReduceSum", ["h"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["positive"]),
        helper.make_node("If", ["positive"], ["y"], then_branch=then_branch,
                         else_branch=else_branch),
    ],
    "fixed_point",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
    [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4]),
        helper.make_tensor_value_info("steps", TensorProto.INT64, []),
    ],
    initializer=[
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(np.array(1e-5, np.float32), "tol"),
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array(0, np.int64), "steps0"),
        numpy_helper.from_array(np.array(100, np.int64), "max_trips"),
    ],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="kiln-examples")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "fixed_point.onnx")
