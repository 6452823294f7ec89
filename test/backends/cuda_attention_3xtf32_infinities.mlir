// --cuda-attention-3xtf32 with infinite keys and values gives what f32
// gives: a key with -inf in a dim where every query is positive scores
// -inf, so no row sees it, and a value with +inf in one dim makes that dim
// of every row +inf. Each f32 operand is split into two TF32 words; an
// infinite element must not become NaN in the products of the other
// operand's small words (0 times inf, or a small word of the other sign
// than its big one). The CUDA backend's kernels run on the host
// (--target=cuda-on-cpu, whose products ignore the 13 low bits of a TF32
// word as the tensor cores do), against the CPU's f32 kernels: at head dim
// 64 the key and value tiles are split as they are staged, at 128 each
// warp splits them as it reads them. Inputs are drawn by a fixed
// generator.
//
// REQUIRES: cuda-backend
// RUN: rm -rf %t && split-file %s %t
// RUN: %python %t/npy.py inputs %t
// RUN: kiln-compile %t/prog.mlir -o %t/cpu.kmod
// RUN: kiln-compile %t/prog.mlir --target=cuda-on-cpu -O1 --cuda-attention-3xtf32 -o %t/tf32.kmod
// RUN: kiln-run %t/cpu.kmod --function d64 --input %t/q64.npy --input %t/k64.npy --input %t/v64.npy --output-dir %t/cpu64
// RUN: kiln-run %t/tf32.kmod --function d64 --input %t/q64.npy --input %t/k64.npy --input %t/v64.npy --output-dir %t/tf64
// RUN: kiln-run %t/cpu.kmod --function d128 --input %t/q128.npy --input %t/k128.npy --input %t/v128.npy --output-dir %t/cpu128
// RUN: kiln-run %t/tf32.kmod --function d128 --input %t/q128.npy --input %t/k128.npy --input %t/v128.npy --output-dir %t/tf128
// RUN: %python %t/npy.py compare %t/cpu64/out0.npy %t/tf64/out0.npy | FileCheck %s --check-prefix=D64
// RUN: %python %t/npy.py compare %t/cpu128/out0.npy %t/tf128/out0.npy | FileCheck %s --check-prefix=D128
// RUN: %python %t/npy.py compare %t/cpu64/out1.npy %t/tf64/out1.npy | FileCheck %s --check-prefix=LSE
// RUN: %python %t/npy.py compare %t/cpu128/out1.npy %t/tf128/out1.npy | FileCheck %s --check-prefix=LSE
//
// D64: 40 +inf, 0 -inf, 0 NaN in both; finite elements within 1e-5
// D128: 40 +inf, 0 -inf, 0 NaN in both; finite elements within 1e-5
// LSE: 0 +inf, 0 -inf, 0 NaN in both; finite elements within 1e-5

//--- prog.mlir
func.func @d64(%q: tensor<1x40x64xf32>, %k: tensor<1x50x64xf32>, %v: tensor<1x50x64xf32>) -> (tensor<1x40x64xf32>, tensor<1x40xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {scale = 1.250000e-01 : f64} : tensor<1x40x64xf32>, tensor<1x50x64xf32>, tensor<1x50x64xf32>
  return %o, %lse : tensor<1x40x64xf32>, tensor<1x40xf32>
}
func.func @d128(%q: tensor<1x40x128xf32>, %k: tensor<1x50x128xf32>, %v: tensor<1x50x128xf32>) -> (tensor<1x40x128xf32>, tensor<1x40xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {scale = 8.838834764831845e-02 : f64} : tensor<1x40x128xf32>, tensor<1x50x128xf32>, tensor<1x50x128xf32>
  return %o, %lse : tensor<1x40x128xf32>, tensor<1x40xf32>
}

//--- npy.py
# f32 .npy files without numpy: `inputs DIR` writes q, k, v at head dims 64
# and 128, `compare A B` counts A's and B's infinities and NaNs and says
# whether they agree and the finite elements are within 1e-5 (relative to
# the largest).
import math
import random
import struct
import sys


def write(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape))
    header += " " * (63 - len(header) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def read(path):
    data = open(path, "rb").read()
    length = struct.unpack("<H", data[8:10])[0]
    body = data[10 + length:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


if sys.argv[1] == "inputs":
    rng = random.Random(7)
    for dims in (64, 128):
        q = [rng.uniform(-2, 2) for _ in range(40 * dims)]
        k = [rng.uniform(-2, 2) for _ in range(50 * dims)]
        v = [rng.uniform(-2, 2) for _ in range(50 * dims)]
        for row in range(40):
            # Dim 5 of every query positive, and one that TF32 holds
            # exactly (its small word 0).
            q[row * dims + 5] = 0.5 + (row % 4) * 0.25
        k[3 * dims + 5] = -math.inf
        v[7 * dims + 9] = math.inf
        write("%s/q%d.npy" % (sys.argv[2], dims), (1, 40, dims), q)
        write("%s/k%d.npy" % (sys.argv[2], dims), (1, 50, dims), k)
        write("%s/v%d.npy" % (sys.argv[2], dims), (1, 50, dims), v)
else:
    a, b = read(sys.argv[2]), read(sys.argv[3])

    def kinds(x):
        return (sum(1 for e in x if e == math.inf),
                sum(1 for e in x if e == -math.inf),
                sum(1 for e in x if math.isnan(e)))

    scale = max(abs(e) for e in a if math.isfinite(e))
    agree = len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or x == y or
        (math.isfinite(x) and abs(x - y) <= 1e-5 * scale)
        for x, y in zip(a, b))
    na, nb = kinds(a), kinds(b)
    if na == nb and agree:
        print("%d +inf, %d -inf, %d NaN in both; finite elements within 1e-5"
              % na)
    else:
        print("f32: %d +inf, %d -inf, %d NaN;" % na,
              "3xTF32: %d +inf, %d -inf, %d NaN;" % nb, "agree:", agree)
