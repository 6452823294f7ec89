#!/usr/bin/python3
"""An embedding table's SGD step: the gradient as a one-hot product against
kiln.scatter_add.

The step is p - lr * g with g the gradient of a lookup of n ids in a
[V, D] table: the cotangent's rows added into a table of zeros. Two kiln
programs compute it:

- `one-hot`: g = onehot(ids)^T x dy, [V, n] x [n, D], the form kiln's
  gather gradient took before kiln.scatter_add (2 V n D flops and a V x n
  one-hot matrix);
- `scatter`: g = kiln.scatter_add(0, ids, dy), which kiln-sparse-updates
  turns into scatter_add(p, ids, -(lr * dy)): a copy of p (the program
  returns a new table) and n D additions.

Both are compiled with kiln-compile and timed with kiln-run --repeat (the
median of the runs, one thread unless --threads), after their outputs are
checked against numpy's np.subtract.at on the same inputs (1e-5).

    /usr/bin/python3 bench/embedding_sgd.py --build-dir build [--markdown FILE]
"""

import argparse
import datetime
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import machine  # noqa: E402

SIZES = [(4096, 64, 256), (32768, 128, 512), (131072, 64, 1024)]
QUICK_SIZES = [(1024, 16, 64)]
LR = 0.125


def program(kind, vocab, width, n):
    t = f"tensor<{vocab}x{width}xf32>"
    head = (f"func.func @step(%p: {t}, %ids: tensor<{n}xi32>, "
            f"%dy: tensor<{n}x{width}xf32>) -> {t} {{\n")
    if kind == "scatter":
        body = (f"  %zero = kiln.constant dense<0.0> : {t}\n"
                f"  %g = kiln.scatter_add %zero, %ids, %dy : {t}, "
                f"tensor<{n}xi32>, tensor<{n}x{width}xf32>\n")
    else:
        grid = f"tensor<{vocab}x{n}xi32>"
        body = (f"  %rows = kiln.iota dim = 0 : {grid}\n"
                f"  %cols = kiln.broadcast_in_dim %ids, dims = [1] : "
                f"(tensor<{n}xi32>) -> {grid}\n"
                f"  %hit = kiln.compare eq, %rows, %cols : {grid}\n"
                f"  %onehot = kiln.cast %hit : tensor<{vocab}x{n}xi1> to "
                f"tensor<{vocab}x{n}xf32>\n"
                f"  %g = kiln.matmul %onehot, %dy : tensor<{vocab}x{n}xf32>, "
                f"tensor<{n}x{width}xf32>\n")
    tail = (f"  %lr = kiln.constant dense<{LR}> : {t}\n"
            f"  %s = kiln.mul %lr, %g : {t}\n"
            f"  %new = kiln.sub %p, %s : {t}\n"
            f"  return %new : {t}\n}}\n")
    return head + body + tail


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{result.stderr}")
    return result.stdout


def measure(build, work, kind, vocab, width, n, inputs, expected, repeat,
            env):
    src = work / f"{kind}.mlir"
    src.write_text(program(kind, vocab, width, n))
    kmod = work / f"{kind}.kmod"
    run([build / "bin/kiln-compile", src, "-o", kmod])
    out = work / f"out-{kind}"
    args = [build / "bin/kiln-run", kmod, "--output-dir", out,
            "--repeat", str(repeat)]
    for path in inputs:
        args += ["--input", path]
    text = run(args, env=env)
    got = np.load(out / "out0.npy")
    err = np.max(np.abs(got - expected) / (1 + np.abs(expected)))
    if err > 1e-5:
        sys.exit(f"{kind} {vocab}x{width}, n={n}: error {err:.2e}")
    match = re.search(r"median ([0-9.]+) us", text)
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds; the median is reported")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    build = pathlib.Path(args.build_dir).resolve()
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rng = np.random.default_rng(0)
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for vocab, width, n in (QUICK_SIZES if args.quick else SIZES):
        with tempfile.TemporaryDirectory() as tmp:
            work = pathlib.Path(tmp)
            p = rng.standard_normal((vocab, width)).astype(np.float32)
            ids = rng.integers(0, vocab, n).astype(np.int32)
            ids[: n // 8] = ids[0]  # a few rows read many times
            dy = rng.standard_normal((n, width)).astype(np.float32)
            expected = p.astype(np.float64)
            np.subtract.at(expected, ids, LR * dy.astype(np.float64))
            inputs = []
            for name, value in (("p", p), ("ids", ids), ("dy", dy)):
                np.save(work / f"{name}.npy", value)
                inputs.append(work / f"{name}.npy")
            times = {"one-hot": [], "scatter": []}
            for _ in range(args.rounds):
                for kind in times:
                    times[kind].append(measure(
                        build, work, kind, vocab, width, n, inputs, expected,
                        args.repeat, env))
            med = {k: float(np.median(v)) for k, v in times.items()}
            rows.append((vocab, width, n, med["one-hot"], med["scatter"]))
            print(f"V={vocab} D={width} n={n}: one-hot {med['one-hot']:.0f} us, "
                  f"scatter {med['scatter']:.0f} us, "
                  f"{med['one-hot'] / med['scatter']:.1f}x", flush=True)
    lines = [
        "# Embedding SGD step: one-hot gradient against kiln.scatter_add",
        "",
        *machine.measured_lines(started, __file__),
        "",
        f"{args.threads} thread(s); {args.rounds} alternating rounds of "
        f"`kiln-run --repeat {args.repeat}`, medians; outputs checked "
        "against numpy first. The step returns a new table, so `scatter` "
        "copies V x D floats and adds n x D.",
        "",
        "| table V x D | ids n | one-hot (us) | scatter_add (us) | speed-up |",
        "| --- | --- | --- | --- | --- |",
    ]
    for vocab, width, n, dense, sparse in rows:
        lines.append(f"| {vocab} x {width} | {n} | {dense:.0f} | {sparse:.0f} "
                     f"| {dense / sparse:.1f}x |")
    machine.write_report(lines, args.markdown)

if __name__ == "__main__":
    main()
