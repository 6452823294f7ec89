"""The sampling, pooling and folding operators against PyTorch and
torchvision, implementations nobody here wrote, on random inputs:

- DeformConv vs torchvision.ops.deform_conv2d (offsets up to 2.5 pixels, so
  that taps fall outside the input; groups, offset groups, a mask, bias,
  stride, padding, dilation);
- RoiAlign vs torchvision.ops.roi_align (aligned = half_pixel and not;
  regions partly outside the image; average pooling);
- Col2Im vs torch.nn.functional.fold;
- MaxPool's Indices vs torch.nn.functional.max_pool2d(return_indices=True)
  (overlapping windows, padding, dilation, ceil_mode) and MaxUnpool of them
  vs torch.nn.functional.max_unpool2d;
- STFT vs torch.stft (one-sided, with and without a window).

Each case is a one-node model through kiln-compile and kiln-run; 1e-5 of
the largest value (indices exactly). Needs torch and torchvision (the
benchmark virtualenv).

    check_vision_ops.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261127)
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def run(name, node, inputs, outputs, opset=22, constants=None):
    """Builds a one-node model of `node` over `inputs` (name -> array) and
    `constants` (name -> array, initializers) with `outputs` (name ->
    (elem type, shape)); returns kiln's outputs."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, F if v.dtype == np.float32 else I64, v.shape)
         for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, t, s) for k, (t, s) in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (constants or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    first = next(iter(outputs))
    results = {first: model_files.compile_and_run(
        bin_dir, work, name, path, list(inputs.values()), output=first)}
    for k in list(outputs)[1:]:
        results[k] = np.load(work / name / f"{k}.npy")
    return results


def compare(name, got, want, exact=False):
    want = np.asarray(want)
    if got.shape != want.shape:
        print(f"{name}: shape {got.shape}, expected {want.shape} DIFFERS")
        return False
    error = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
    bound = 0 if exact else 1e-5 * max(float(np.max(np.abs(want))), 1.0)
    good = error <= bound
    print(f"{name}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
    return good


def deform_conv(name, n, c, h, w, oc, k, stride, pad, dil, groups, offset_groups, mask):
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    weight = rng.standard_normal((oc, c // groups, k, k)).astype(np.float32)
    bias = rng.standard_normal(oc).astype(np.float32)
    oh = (h + 2 * pad - dil * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dil * (k - 1) - 1) // stride + 1
    offset = rng.uniform(-2.5, 2.5, (n, offset_groups * 2 * k * k, oh, ow)).astype(np.float32)
    m = rng.uniform(0, 1, (n, offset_groups * k * k, oh, ow)).astype(np.float32)
    inputs = {"x": x, "w": weight, "offset": offset, "b": bias}
    if mask:
        inputs["mask"] = m
    node = helper.make_node(
        "DeformConv", list(inputs), ["y"], strides=[stride, stride],
        pads=[pad] * 4, dilations=[dil, dil], group=groups, offset_group=offset_groups)
    got = run(name, node, inputs, {"y": (F, [n, oc, oh, ow])})["y"]
    want = torchvision.ops.deform_conv2d(
        torch.from_numpy(x).double(), torch.from_numpy(offset).double(),
        torch.from_numpy(weight).double(), torch.from_numpy(bias).double(),
        stride=stride, padding=pad, dilation=dil,
        mask=torch.from_numpy(m).double() if mask else None).numpy()
    return compare(name, got, want)


def roi_align(name, aligned, ratio):
    x = rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
    boxes = []
    for _ in range(5):
        x1, y1 = rng.uniform(-2, 9, 2)
        boxes.append([x1, y1, x1 + rng.uniform(0.5, 6), y1 + rng.uniform(0.5, 6)])
    rois = np.array(boxes, np.float32)
    idx = rng.integers(0, 2, 5).astype(np.int64)
    node = helper.make_node(
        "RoiAlign", ["x", "rois", "idx"], ["y"], output_height=3, output_width=4,
        sampling_ratio=ratio, spatial_scale=0.75,
        coordinate_transformation_mode="half_pixel" if aligned else "output_half_pixel")
    got = run(name, node, {"x": x, "rois": rois, "idx": idx},
              {"y": (F, [5, 3, 3, 4])})["y"]
    boxes_t = torch.cat([torch.from_numpy(idx).double()[:, None],
                         torch.from_numpy(rois).double()], 1)
    want = torchvision.ops.roi_align(torch.from_numpy(x).double(), boxes_t, (3, 4),
                                     spatial_scale=0.75, sampling_ratio=ratio,
                                     aligned=aligned).numpy()
    return compare(name, got, want)


def col2im(name, c, image, block, stride, pad, dil):
    blocks = [(image[i] + 2 * pad[i] - dil[i] * (block[i] - 1) - 1) // stride[i] + 1
              for i in range(2)]
    x = rng.standard_normal((2, c * block[0] * block[1], blocks[0] * blocks[1])).astype(np.float32)
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"],
                            strides=stride, pads=[pad[0], pad[1], pad[0], pad[1]],
                            dilations=dil)
    got = run(name, node, {"x": x}, {"y": (F, [2, c, *image])},
              constants={"image": np.array(image, np.int64),
                         "block": np.array(block, np.int64)})
    want = torch.nn.functional.fold(torch.from_numpy(x).double(), image, block,
                                    dilation=dil, padding=pad, stride=stride).numpy()
    return compare(name, got["y"], want)


def max_pool(name, shape, k, stride, pad, dil, ceil):
    # Few distinct values so that windows hold ties (the first one wins).
    x = rng.integers(-3, 4, shape).astype(np.float32)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[k, k],
                            strides=[stride, stride], pads=[pad] * 4,
                            dilations=[dil, dil], ceil_mode=int(ceil))
    yt, it = torch.nn.functional.max_pool2d(
        torch.from_numpy(x), k, stride, pad, dil, ceil_mode=ceil, return_indices=True)
    got = run(name, node, {"x": x}, {"y": (F, list(yt.shape)), "i": (I64, list(it.shape))})
    # torch's indices count within each (n, c) plane; ONNX's from the start
    # of the tensor.
    plane = shape[2] * shape[3]
    base = (np.arange(shape[0] * shape[1]) * plane).reshape(shape[0], shape[1], 1, 1)
    good = compare(name + "/values", got["y"], yt.numpy())
    good &= compare(name + "/indices", got["i"], it.numpy() + base, exact=True)
    # MaxUnpool of the pooled values at those indices.
    pooled, indices = yt.numpy(), (it.numpy() + base).astype(np.int64)
    unpool = helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[k, k],
                              strides=[stride, stride], pads=[pad] * 4)
    size = [(pooled.shape[2 + d] - 1) * stride - 2 * pad + k for d in range(2)]
    # Where the unpooled size differs from the pooled input's, ONNX's
    # MaxUnpool places the unpooled tensor at the low corner of
    # output_shape (its reference and test data), PyTorch indexes
    # output_size: only the cases where the two agree are compared.
    if dil == 1 and not ceil and size == list(shape[2:]):
        got_u = run(name + "_unpool", unpool, {"x": pooled, "i": indices},
                    {"y": (F, [shape[0], shape[1], *size])})["y"]
        want_u = torch.nn.functional.max_unpool2d(
            torch.from_numpy(pooled), it, k, stride, pad,
            output_size=size).numpy()
        good &= compare(name + "_unpool", got_u, want_u)
    return good


def stft(name, length, frame, step, window):
    x = rng.standard_normal((2, length, 1)).astype(np.float32)
    inputs = {"x": x}
    constants = {"step": np.array(step, np.int64)}
    names = ["x", "step"]
    win = np.hanning(frame).astype(np.float32)
    if window:
        inputs["window"] = win
        names.append("window")
    else:
        constants["frame"] = np.array(frame, np.int64)
        names += ["", "frame"]
    frames = 1 + (length - frame) // step
    node = helper.make_node("STFT", names, ["y"])
    got = run(name, node, inputs, {"y": (F, [2, frames, frame // 2 + 1, 2])}, opset=17,
              constants=constants)["y"]
    want = torch.stft(torch.from_numpy(x[..., 0]).double(), frame, step, frame,
                      window=torch.from_numpy(win).double() if window else None,
                      center=False, onesided=True, return_complex=True)
    want = torch.view_as_real(want).permute(0, 2, 1, 3).numpy()
    return compare(name, got, want)


ok = True
ok &= deform_conv("deform_conv", 2, 4, 7, 8, 6, 3, 1, 1, 1, 2, 2, True)
ok &= deform_conv("deform_conv_strided", 1, 3, 9, 9, 4, 3, 2, 0, 2, 1, 1, False)
ok &= deform_conv("deform_conv_2x2", 2, 2, 5, 6, 3, 2, 1, 1, 1, 1, 2, True)
for aligned in (False, True):
    for ratio in (1, 2, 3):
        ok &= roi_align(f"roi_align_{'aligned' if aligned else 'unaligned'}_{ratio}",
                        aligned, ratio)
ok &= col2im("col2im", 3, [7, 8], [3, 2], [1, 1], [0, 0], [1, 1])
ok &= col2im("col2im_strided", 2, [9, 10], [3, 3], [2, 3], [1, 2], [2, 1])
ok &= max_pool("max_pool", (2, 3, 7, 8), 3, 1, 1, 1, False)
ok &= max_pool("max_pool_strided", (1, 2, 8, 10), 2, 2, 0, 1, False)
ok &= max_pool("max_pool_uneven", (1, 2, 9, 9), 2, 2, 0, 1, False)
ok &= max_pool("max_pool_dilated_ceil", (2, 2, 10, 9), 3, 2, 1, 2, True)
ok &= stft("stft", 100, 16, 4, False)
ok &= stft("stft_window", 64, 20, 7, True)
sys.exit(0 if ok else 1)
