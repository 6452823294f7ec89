"""Writes the malformed ONNX models that test/tools/onnx-import.test feeds to
the importer, one per way a model can be wrong, into the directory given.

    make_bad_models.py OUT_DIR        (Debian's python3 with python3-onnx)
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import model_files

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, initializer=(), opset=13, check=True):
    model_files.save(out, name, nodes, inputs, outputs, initializer, opset, check)


x = helper.make_tensor_value_info("x", F, [2, 3])
y = helper.make_tensor_value_info("y", F, [2, 3])

# Two nodes that feed each other.
save("cycle", [helper.make_node("Relu", ["b"], ["a"], name="first"),
               helper.make_node("Relu", ["a"], ["b"], name="second"),
               helper.make_node("Add", ["x", "b"], ["y"], name="sum")],
     [x], [y], check=False)

# A node input that nothing defines (an initializer left out).
save("missing_initializer", [helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")],
     [x], [y], check=False)

# Shapes that do not agree: ONNX's shape inference rejects the MatMul.
save("shape_mismatch",
     [helper.make_node("MatMul", ["x", "w"], ["y"], name="project")],
     [x], [helper.make_tensor_value_info("y", F, [2, 5])],
     [numpy_helper.from_array(np.ones((4, 5), np.float32), "w")], check=False)

# An initializer whose raw bytes do not fill its shape.
bad = numpy_helper.from_array(np.ones((2, 3), np.float32), "bias")
bad.raw_data = bad.raw_data[:-4]
save("short_initializer", [helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")],
     [x], [y], [bad], check=False)

# External data whose location leaves the model's folder.
ext = numpy_helper.from_array(np.ones((2, 3), np.float32), "bias")
ext.ClearField("raw_data")
ext.data_location = TensorProto.EXTERNAL
for key, value in (("location", "../outside.bin"), ("offset", "0"), ("length", "24")):
    entry = ext.external_data.add()
    entry.key, entry.value = key, value
save("external_outside", [helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")],
     [x], [y], [ext], check=False)

# An operator kiln does not support (its output's shape depends on the
# data).
save("unsupported_op",
     [helper.make_node("Unique", ["m"], ["u"], name="distinct")],
     [helper.make_tensor_value_info("m", F, [3, 3])],
     [helper.make_tensor_value_info("u", F, [9])])

# RoiAlign's default sampling_ratio 0 sizes the sampling grid per region at
# run time.
save("roi_align_adaptive",
     [helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="pool")],
     [helper.make_tensor_value_info("x", F, [1, 2, 8, 8]),
      helper.make_tensor_value_info("rois", F, [3, 4]),
      helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
     [helper.make_tensor_value_info("y", F, [3, 2, 1, 1])], opset=16)

# Regions of images that X does not have (N = 0).
save("roi_align_no_images",
     [helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], name="pool",
                       sampling_ratio=2, output_height=5, output_width=5)],
     [helper.make_tensor_value_info("x", F, [0, 1, 10, 10]),
      helper.make_tensor_value_info("rois", F, [3, 4]),
      helper.make_tensor_value_info("idx", TensorProto.INT64, [3])],
     [helper.make_tensor_value_info("y", F, [3, 1, 5, 5])], opset=16)

# BitCast between types of different widths.
save("bitcast_widths",
     [helper.make_node("BitCast", ["x"], ["y"], name="bits", to=TensorProto.INT64)],
     [x], [helper.make_tensor_value_info("y", TensorProto.INT64, [2, 3])],
     opset=26, check=False)

# A node of a domain the model imports no opset of.
graph = helper.make_graph(
    [helper.make_node("Binarizer", ["x"], ["y"], name="binary", domain="ai.onnx.ml")],
    "no_domain_opset", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
(out / "no_domain_opset.onnx").write_bytes(model.SerializeToString())

# A symbolic batch dim.
save("symbolic_batch", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [helper.make_tensor_value_info("x", F, ["batch", 3])],
     [helper.make_tensor_value_info("y", F, ["batch", 3])])

# Indices into an empty tensor (found by the importer fuzzer: the gather used
# to be built, and its shape inference to abort).
save("gather_from_empty",
     [helper.make_node("GatherND", ["data", "indices"], ["out"], name="pick")],
     [helper.make_tensor_value_info("data", TensorProto.INT32, [0, 2]),
      helper.make_tensor_value_info("indices", TensorProto.INT64, [2, 2])],
     [helper.make_tensor_value_info("out", TensorProto.INT32, [2])], check=False)

# A ConvTranspose input without spatial dims (found by the importer fuzzer:
# ONNX 1.12's own shape inference dereferenced null on it).
save("conv_transpose_rank2",
     [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="upsample")],
     [helper.make_tensor_value_info("X", F, [1, 3]),
      helper.make_tensor_value_info("W", F, [1, 2, 3])],
     [helper.make_tensor_value_info("Y", F, [1, 2])], check=False)

# A pool with a stride of 0 (found by the importer fuzzer: ONNX 1.12's shape
# inference divided by it).
save("pool_stride_zero",
     [helper.make_node("AveragePool", ["X"], ["Y"], name="pool",
                       kernel_shape=[2, 1], strides=[2, 0])],
     [helper.make_tensor_value_info("X", F, [1, 2, 4, 4])],
     [helper.make_tensor_value_info("Y", F, [1, 2, 2, 4])], check=False)

# MaxUnpool with scalar indices, which ONNX 1.12's shape inference
# dereferenced null on (found by the importer fuzzer): the guarded
# inference of the windowed ops checks the ranks first.
save("max_unpool_scalar_indices",
     [helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="unpool",
                       kernel_shape=[2, 2], strides=[2, 2])],
     [helper.make_tensor_value_info("x", F, [1, 1, 2, 2]),
      helper.make_tensor_value_info("i", TensorProto.INT64, [])],
     [helper.make_tensor_value_info("y", F, [1, 1, 4, 4])], check=False,
     opset=11)

# Gemm with a rank-1 B (found by the importer fuzzer: ONNX 1.12's shape
# inference read a dim B does not have).
save("gemm_vector_b",
     [helper.make_node("Gemm", ["a", "b"], ["c"], name="project")],
     [helper.make_tensor_value_info("a", F, [2, 3]),
      helper.make_tensor_value_info("b", F, [3])],
     [helper.make_tensor_value_info("c", F, [2, 3])], check=False)

# LayerNormalization of a rank-0 input (found by the importer fuzzer: ONNX
# 1.12's shape inference indexed a dim the input does not have).
save("layer_norm_scalar",
     [helper.make_node("LayerNormalization", ["X", "W"], ["Y"], name="norm")],
     [helper.make_tensor_value_info("X", F, []),
      helper.make_tensor_value_info("W", F, [1])],
     [helper.make_tensor_value_info("Y", F, [])], check=False, opset=17)

# A ConvTranspose weight of lower rank than the input, with kernel_shape
# given (found by the importer fuzzer).
save("conv_transpose_weight_rank",
     [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="upsample",
                       kernel_shape=[2])],
     [helper.make_tensor_value_info("X", F, [1, 1, 4]),
      helper.make_tensor_value_info("W", F, [1, 1])],
     [helper.make_tensor_value_info("Y", F, [1, 1, 5])], check=False, opset=1)

# A Reshape whose shape is a constant of 2^35 + 1 values, made by
# ConstantOfShape (a splat, a few bytes): it is refused, not expanded into
# 256 GiB (found by the importer fuzzer, out of memory).
save("huge_constant_shape",
     [helper.make_node("ConstantOfShape", ["n"], ["shape"], name="ones",
                       value=numpy_helper.from_array(np.ones(1, np.int64))),
      helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
     [x], [y],
     [numpy_helper.from_array(np.array([2**35 + 1], np.int64), "n")],
     check=False)

# A Range of 10^12 elements from constant bounds, and an EyeLike of a
# 10^5 x 10^5 input: the importer builds both as constants, so both are
# refused rather than allocated (found by the importer fuzzer, out of
# memory in Range).
save("huge_range",
     [helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
     [], [helper.make_tensor_value_info("y", TensorProto.INT64, [10**12])],
     [numpy_helper.from_array(np.array(v, np.int64), n)
      for n, v in (("start", 0), ("limit", 10**12), ("delta", 1))], check=False)
save("huge_eye_like", [helper.make_node("EyeLike", ["x"], ["y"], name="eye")],
     [helper.make_tensor_value_info("x", F, [10**5, 10**5])],
     [helper.make_tensor_value_info("y", F, [10**5, 10**5])], check=False)

# Trilu of a 10^5 x 10^5 input: its mask is computed from iotas, not built
# as a constant of 10^10 flags (found by the importer fuzzer, out of
# memory); it imports.
save("huge_trilu", [helper.make_node("Trilu", ["x"], ["y"], name="trilu")],
     [helper.make_tensor_value_info("x", F, [10**5, 10**5])],
     [helper.make_tensor_value_info("y", F, [10**5, 10**5])], opset=14, check=False)

# Split sizes that add up to the dim with one negative: the first part ran
# past the dim before the negative one was seen (found by the importer
# fuzzer: an abort in the slice's builder).
save("split_negative",
     [helper.make_node("Split", ["x", "split"], ["a", "b"], name="split", axis=1)],
     [x], [helper.make_tensor_value_info("a", F, [2, 5]),
           helper.make_tensor_value_info("b", F, [2, -2])],
     [numpy_helper.from_array(np.array([5, -2], np.int64), "split")], check=False)

# LayerNormalization asking for float16 statistics (stash_type 10): the
# translation does not read stash_type, and any attribute a translation
# does not read must hold its schema's default (the importer once ignored
# such attributes: QuantizeLinear-21's output_dtype quantized int8 as
# uint8).
save("layer_norm_stash_type",
     [helper.make_node("LayerNormalization", ["x", "scale"], ["y"], name="norm",
                       stash_type=TensorProto.FLOAT16)],
     [x], [y], [numpy_helper.from_array(np.ones(3, np.float32), "scale")],
     opset=17, check=False)

# QLinearConv with scalar weights and a weight zero point of two entries:
# the per-channel check read the weights' first dimension, which they do
# not have (found by the importer fuzzer: a null read). ONNX's shape
# inference does not check QLinearConv's weights.
U8 = TensorProto.UINT8
save("qlinear_conv_scalar_weights",
     [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                       ["y"], name="qconv")],
     [helper.make_tensor_value_info("x", U8, [1, 1, 7, 7]),
      helper.make_tensor_value_info("xs", F, []),
      helper.make_tensor_value_info("xz", U8, []),
      helper.make_tensor_value_info("w", U8, []),
      helper.make_tensor_value_info("ws", F, [1]),
      helper.make_tensor_value_info("wz", U8, [2]),
      helper.make_tensor_value_info("ys", F, []),
      helper.make_tensor_value_info("yz", U8, [])],
     [helper.make_tensor_value_info("y", U8, [1, 1, 7, 7])],
     check=False, opset=10)

# Recurrent ops with what kiln does not import: shorter sequences, an
# unknown activation, and a W that does not match the direction.
def lstm_model(name, attributes, seq_lens=None, w_dirs=1):
    inputs = [helper.make_tensor_value_info("X", F, [3, 2, 4])]
    initializer = [numpy_helper.from_array(np.zeros((w_dirs, 12, 4), np.float32), "W"),
                   numpy_helper.from_array(np.zeros((1, 12, 3), np.float32), "R")]
    names = ["X", "W", "R"]
    if seq_lens is not None:
        initializer.append(numpy_helper.from_array(np.array(seq_lens, np.int32), "lens"))
        names += ["", "lens"]
    save(name, [helper.make_node("LSTM", names, ["", "Y_h"], name="cell", hidden_size=3,
                                 **attributes)],
         inputs, [helper.make_tensor_value_info("Y_h", F, [1, 2, 3])], initializer,
         opset=14, check=False)


lstm_model("lstm_short_sequence", {}, seq_lens=[3, 2])
lstm_model("lstm_bad_activation", {"activations": ["Sigmoid", "Tanh", "Swish"]})
lstm_model("lstm_w_directions", {}, w_dirs=2)
