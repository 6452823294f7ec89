"""DFT (opset 20) against numpy.fft in float64: real and complex signals,
forward and inverse, one-sided (rfft) and the real inverse of a one-sided
spectrum (irfft), dft_length cutting and zero-padding the signal, along
inner and outer axes. One-node models written with Debian's onnx package at
IR 10, through kiln-compile and kiln-run; 1e-5 of the largest value.

    check_dft.py BIN_DIR WORK_DIR
"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

import model_files

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(20261126)


def to_parts(c):
    return np.stack([c.real, c.imag], axis=-1)


def case(name, x, axis, want, length=None, inverse=0, onesided=0):
    inputs = ["x", "n" if length else "", "axis"]
    graph = helper.make_graph(
        [helper.make_node("DFT", inputs, ["y"], inverse=inverse, onesided=onesided)], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, want.shape)],
        [helper.make_tensor("axis", TensorProto.INT64, [], [axis])]
        + ([helper.make_tensor("n", TensorProto.INT64, [], [length])] if length else []))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    path = work / f"{name}.onnx"
    path.write_bytes(model.SerializeToString())
    got = model_files.compile_and_run(bin_dir, work, name, path, [x])
    error = float(np.max(np.abs(got - want))) if got.shape == want.shape else np.inf
    good = error <= 1e-5 * float(np.max(np.abs(want)))
    print(f"{name}: max error {error:.2e} {'ok' if good else 'DIFFERS'}")
    return good


ok = True
real = rng.standard_normal((2, 12, 3, 1)).astype(np.float32)
cplx = rng.standard_normal((2, 12, 3, 2)).astype(np.float32)
r64 = real[..., 0].astype(np.float64)
c64 = cplx[..., 0].astype(np.float64) + 1j * cplx[..., 1]
ok &= case("real", real, 1, to_parts(np.fft.fft(r64, axis=1)))
ok &= case("complex_axis2", cplx, 2, to_parts(np.fft.fft(c64, axis=2)))
ok &= case("rfft", real, 1, to_parts(np.fft.rfft(r64, axis=1)), onesided=1)
ok &= case("rfft_odd_length", real, 1, to_parts(np.fft.rfft(r64, n=9, axis=1)), 9, onesided=1)
ok &= case("padded", cplx, 1, to_parts(np.fft.fft(c64, n=17, axis=1)), 17)
ok &= case("inverse", cplx, -2, to_parts(np.fft.ifft(c64, axis=2)), inverse=1)
ok &= case("inverse_cut", cplx, 1, to_parts(np.fft.ifft(c64, n=8, axis=1)), 8, inverse=1)
spectrum = np.fft.rfft(r64, axis=1)
half = to_parts(spectrum).astype(np.float32)
ok &= case("irfft", half, 1, np.fft.irfft(spectrum, n=12, axis=1)[..., None],
           12, inverse=1, onesided=1)
ok &= case("irfft_odd", half, 1, np.fft.irfft(spectrum, n=11, axis=1)[..., None],
           11, inverse=1, onesided=1)
sys.exit(0 if ok else 1)
