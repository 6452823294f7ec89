"""Writes small ONNX models for the importer's tests (make_bad_models.py,
make_dtype_models.py): one graph per file, opset and IR version fixed."""
import onnx
from onnx import helper


def save(out, name, nodes, inputs, outputs, initializer=(), opset=13, check=True):
    """Writes OUT/NAME.onnx; `check=False` for models meant to fail ONNX's
    checker."""
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializer))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    (out / f"{name}.onnx").write_bytes(model.SerializeToString())
