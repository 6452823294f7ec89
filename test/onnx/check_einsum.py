"""ONNX Einsum through kiln against numpy.einsum.

For each equation (explicit and implicit outputs, ellipses that broadcast,
diagonals, sums, several operands, integers) builds a one-node model with
the onnx package, compiles it with kiln-compile, runs it with kiln-run on
random inputs and compares with numpy.einsum: floats to 1e-5 relative,
integers exactly. Also checks that equations kiln cannot import are
rejected with a message naming the node.

    check_einsum.py BIN_DIR WORK_DIR
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

bin_dir, work = Path(sys.argv[1]), Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)

# equation, operand shapes, dtype
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)], np.float32),
    ("ij,jk", [(3, 4), (4, 5)], np.float32),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], np.float32),
    ("ij->ji", [(3, 4)], np.float32),
    ("ij->", [(3, 4)], np.float32),
    ("ii->i", [(4, 4)], np.float32),
    ("ii", [(4, 4)], np.float32),
    ("bii->bi", [(2, 3, 3)], np.float32),
    ("i,i", [(5,), (5,)], np.float32),
    ("i,j->ij", [(3,), (4,)], np.float32),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (2, 5, 4, 2)], np.float32),
    ("...ij,jk", [(2, 3, 4), (4, 5)], np.float32),
    ("i...->...", [(3, 2, 4)], np.float32),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], np.float32),
    ("abc,cd,ab->d", [(2, 3, 4), (4, 5), (2, 3)], np.float32),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)], np.float32),
    ("ij,ij->i", [(3, 4), (3, 4)], np.float64),
    ("ij,jk->ik", [(3, 4), (4, 2)], np.int64),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)], np.int32),
]

DTYPES = {np.float32: onnx.TensorProto.FLOAT, np.float64: onnx.TensorProto.DOUBLE,
          np.int64: onnx.TensorProto.INT64, np.int32: onnx.TensorProto.INT32}


def model(equation, shapes, dtype, out_shape):
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation, name="es")
    graph = helper.make_graph(
        [node], "einsum",
        [helper.make_tensor_value_info(n, DTYPES[dtype], s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", DTYPES[dtype], out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])


rng = np.random.default_rng(12)
failures = 0
for k, (equation, shapes, dtype) in enumerate(CASES):
    if np.issubdtype(dtype, np.integer):
        inputs = [rng.integers(-5, 6, s).astype(dtype) for s in shapes]
    else:
        inputs = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    want = np.asarray(np.einsum(equation, *inputs)).astype(dtype)
    path = work / f"einsum_{k}.onnx"
    onnx.save(model(equation, shapes, dtype, list(want.shape)), str(path))
    kmod = work / f"einsum_{k}.kmod"
    compiled = subprocess.run([bin_dir / "kiln-compile", path, "-o", kmod],
                              capture_output=True, text=True)
    if compiled.returncode:
        print(f"{equation}: kiln-compile failed: {compiled.stderr.strip()}")
        failures += 1
        continue
    args = [bin_dir / "kiln-run", kmod]
    for i, value in enumerate(inputs):
        np.save(work / f"einsum_{k}_x{i}.npy", value)
        args += ["--input", work / f"einsum_{k}_x{i}.npy"]
    out = work / f"einsum_{k}_out"
    subprocess.run(args + ["--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    got = np.load(out / "y.npy")
    if np.issubdtype(dtype, np.integer):
        ok = got.shape == want.shape and np.array_equal(got, want)
    else:
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)
    if not ok:
        print(f"{equation}: kiln gives {got.shape} {got.ravel()[:6]}, numpy {want.shape} "
              f"{want.ravel()[:6]}")
        failures += 1

# Rejected with the node named: a label whose sizes disagree.
path = work / "einsum_bad.onnx"
bad = model("ij,jk->ik", [(3, 4), (5, 2)], np.float32, [3, 2])
onnx.save(bad, str(path))
rejected = subprocess.run([bin_dir / "kiln-translate", "--onnx-to-mlir", path],
                          capture_output=True, text=True)
if rejected.returncode == 0 or "node 'es' (Einsum" not in rejected.stderr:
    print(f"mismatched sizes: expected an error naming node 'es', got status "
          f"{rejected.returncode}: {rejected.stderr.strip()}")
    failures += 1

print(f"{len(CASES)} Einsum equations checked against numpy.einsum, {failures} failed")
sys.exit(1 if failures else 0)
