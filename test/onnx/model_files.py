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


def compile_and_run(bin_dir, work, name, model_path, inputs, output="y", bind=()):
    """Compiles `model_path` with kiln-compile (each of `bind` a
    --bind-input value), runs it with kiln-run on `inputs` (numpy arrays,
    saved as WORK/NAME_inK.npy) and returns its output `output`."""
    import subprocess

    import numpy as np

    kmod = work / f"{name}.kmod"
    subprocess.run([bin_dir / "kiln-compile", model_path, "-o", kmod]
                   + [f"--bind-input={b}" for b in bind], check=True)
    args = [bin_dir / "kiln-run", kmod, "--output-dir", work / name]
    for k, value in enumerate(inputs):
        path = work / f"{name}_in{k}.npy"
        np.save(path, value)
        args += ["--input", path]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return np.load(work / name / f"{output}.npy")


def run_kiln(bin_dir, model, inputs, work):
    """Compiles `model` with kiln-compile (no flags) and runs it with
    kiln-run on `inputs` (numpy arrays, saved as WORK/STEM_inK.npy): (the
    directory of its outputs' .npy files, None), or (None, the failing
    tool and the last line of its message)."""
    import subprocess

    import numpy as np

    kmod = work / (model.stem + ".kmod")
    done = subprocess.run([bin_dir / "kiln-compile", model, "-o", kmod],
                          capture_output=True, text=True)
    if done.returncode:
        return None, "kiln-compile: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    args = [bin_dir / "kiln-run", kmod]
    for i, value in enumerate(inputs):
        np.save(work / f"{model.stem}_in{i}.npy", value)
        args += ["--input", work / f"{model.stem}_in{i}.npy"]
    out = work / (model.stem + "_out")
    done = subprocess.run(args + ["--output-dir", out], capture_output=True, text=True)
    if done.returncode:
        return None, "kiln-run: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return out, None


def extreme_bytes(rng, dtype, shape):
    """Random integers of the 8-bit `dtype` from `rng`, a quarter of them
    its extremes."""
    import numpy as np

    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, flat.size // 4, replace=False)
    flat[picks] = rng.choice([info.min, info.max], picks.size)
    return x
