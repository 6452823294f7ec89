#!/usr/bin/env python3
"""kiln.while loops on a CUDA GPU as CUDA graphs, against host loops.

Two steps, so that the GPU machine needs neither the compiler nor LLVM:

    python3 bench/graph_loops_cuda.py prepare DIR [--build-dir build]
            [--programs all] [--fuzz-seeds A:B,S,...] [--fuzz-grad]
            [--baseline NAME=BUILD ...]
        (on any machine with kiln built) compiles every public function of
        the end-to-end programs that hold a kiln.while (test/e2e; with
        --programs all, of every end-to-end program the CUDA backend
        compiles; with --fuzz-seeds A:B, also the random programs of
        `kiln-program-fuzz --print SEED` for SEED in [A, B), and for each
        further seed S in the comma-separated list, that it
        compiles; with --fuzz-grad, also each one's gradient, kiln-grad's
        @main_grad, where kiln-grad derives it) and the data-dependent while of bench/workloads.py for
        --target=cuda (sm_90 PTX, host code for x86-64-v3) and for the CPU,
        draws inputs as the end-to-end harness does (floats in [-2, 2],
        integers in [-8, 8], fair booleans), and keeps the CPU module's
        outputs as the expected ones; copies kiln-run and the CUDA plug-ins
        into DIR. --baseline NAME=BUILD also compiles the workload with
        BUILD/bin/kiln-compile (another revision's build directory) and
        copies its BUILD/bin/kiln-run (the runtime of that revision, which
        its module calls), timed beside this one's.

    python3 bench/graph_loops_cuda.py check DIR [--repeat 200]
        (on the GPU machine, numpy only) runs each CUDA module with its
        loops as graphs (the default) and, where the program has a loop, as
        host loops (KILN_CUDA_GRAPHS=0), compares both with the expected
        outputs, reports how many loops ran as graphs and the stream waits
        of each call, after timing the workload both ways (and each
        baseline's both ways) with kiln-run --device-resident. With graphs
        each module is called three times (kiln-run --repeat 2) and the
        last call's outputs are compared: the runtime captures a call whose
        host code only queues device work at its second call and launches
        that graph again at the third. Exit status 1 if any output is
        off.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = ["control_flow.mlir", "fusion_while.mlir", "newton_smoke.mlir"]

DTYPES = {"f32": "<f4", "f64": "<f8", "f16": "<f2", "i1": "|b1", "i8": "|i1",
          "i16": "<i2", "i32": "<i4", "i64": "<i8", "ui8": "|u1",
          "ui16": "<u2", "ui32": "<u4", "ui64": "<u8"}


def signatures(text):
    """(name, [(dims, dtype)]) of each public function of a kiln program."""
    found = []
    for match in re.finditer(r"^\s*func\.func @(\w+)\(([^)]*)\)", text, re.M):
        inputs = []
        for tensor in re.findall(r"tensor<([^>]*)>", match.group(2)):
            parts = tensor.split("x")
            dims = [int(d) if d.isdigit() else None for d in parts[:-1]]
            inputs.append((dims, parts[-1]))
        found.append((match.group(1), inputs))
    return found


def random_input(np, rng, dims, dtype):
    if dtype.startswith("f"):
        return rng.uniform(-2, 2, dims).astype(DTYPES[dtype])
    if dtype == "i1":
        return rng.integers(0, 2, dims).astype(bool)
    values = rng.integers(-8, 9, dims)
    return values.astype(DTYPES[dtype])


def run(command, env=None, check=True):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise RuntimeError(" ".join(command) + " failed:\n" + result.stdout +
                           result.stderr)
    return result


def prepare(args):
    import numpy as np
    sys.path.insert(0, HERE)
    import workloads as W

    out = os.path.abspath(args.dir)
    os.makedirs(out, exist_ok=True)
    scratch = os.path.join(out, "cpu")
    os.makedirs(scratch, exist_ok=True)
    compile_ = os.path.join(args.build_dir, "bin", "kiln-compile")
    kiln_run = os.path.join(args.build_dir, "bin", "kiln-run")
    programs = PROGRAMS
    if args.programs == "all":
        e2e = os.path.join(ROOT, "test", "e2e")
        with open(os.path.join(e2e, "cuda_exclusions.txt")) as f:
            excluded = {line.strip() for line in f
                        if line.strip() and not line.startswith("#")}
        programs = sorted(p for p in os.listdir(e2e) if p.endswith(".mlir")
                          and p[:-5] not in excluded and p not in excluded)
    sources = [(p[:-5], open(os.path.join(ROOT, "test", "e2e", p)).read())
               for p in programs]
    # Random programs of kiln-program-fuzz's generator (each a @main).
    if args.fuzz_seeds:
        seeds = []
        for item in args.fuzz_seeds.split(","):
            if ":" in item:
                first, last = (int(v) for v in item.split(":"))
                seeds.extend(range(first, last))
            else:
                seeds.append(int(item))
        fuzz = os.path.join(args.build_dir, "test", "fuzz",
                            "kiln-program-fuzz")
        kiln_opt = os.path.join(args.build_dir, "bin", "kiln-opt")
        for seed in dict.fromkeys(seeds):
            text = run([fuzz, "--print", str(seed)]).stdout
            sources.append((f"fuzz_{seed}", text))
            if not args.fuzz_grad:
                continue
            # And its gradient, @main_grad of kiln-grad, as its own case.
            with open(os.path.join(scratch, "fuzz.mlir"), "w") as f:
                f.write(text)
            derived = run([kiln_opt, os.path.join(scratch, "fuzz.mlir"),
                           "--kiln-grad=function=main"], check=False)
            if derived.returncode != 0:
                print(f"fuzz_{seed}_grad: left out (kiln-grad refuses it):",
                      derived.stderr.strip().splitlines()[-1:])
                continue
            sources.append((f"fuzz_{seed}_grad", derived.stdout))
    solver = W.WhileSolver(False)
    sources.append(("while_solver", solver.mlir()))
    cases = []
    rng = np.random.default_rng(7)
    for program, text in sources:
        source = os.path.join(out, program + ".mlir")
        with open(source, "w") as f:
            f.write(text)
        cuda = os.path.join(out, program + ".cuda.kmod")
        # The CPU modules only make the expected outputs: kept out of DIR.
        cpu = os.path.join(scratch, program + ".cpu.kmod")
        compiled = run([compile_, source, "--target=cuda", "--cuda-arch=sm_90",
                        "--target-cpu=x86-64-v3", "-o", cuda], check=False)
        if compiled.returncode != 0:
            # A random program may use what the CUDA backend refuses.
            if not program.startswith("fuzz_"):
                raise RuntimeError(compiled.stderr)
            print(f"{program}: left out (--target=cuda refuses it):",
                  compiled.stderr.strip().splitlines()[-1:])
            continue
        run([compile_, source, "-o", cpu])
        loops = "kiln.while" in text
        for function, inputs in signatures(text):
            if program.endswith("_grad") and function == "main":
                continue  # The program's own case has it.
            case = f"{program}.{function}"
            # numpy has no bf16, and a dynamic extent has no size to draw.
            if any(dtype not in DTYPES or None in dims
                   for dims, dtype in inputs):
                print(f"{case}: left out (bf16 or dynamic input)")
                continue
            folder = os.path.join(out, case)
            os.makedirs(folder, exist_ok=True)
            files = []
            for i, (dims, dtype) in enumerate(inputs):
                if program == "while_solver":
                    value = (rng.uniform(-1, 1, dims) if i == 0 else
                             rng.uniform(0.5, 1.5, dims)).astype("<f4")
                else:
                    value = random_input(np, rng, dims, dtype)
                path = os.path.join(folder, f"in{i}.npy")
                np.save(path, value)
                files.append(os.path.basename(path))
            command = [kiln_run, cpu, "--function", function,
                       "--output-dir", os.path.join(folder, "expected")]
            for name in files:
                command += ["--input", os.path.join(folder, name)]
            result = run(command, check=False)
            if result.returncode != 0:
                print(f"{case}: the CPU module failed, left out:",
                      result.stderr.strip().splitlines()[-1:])
                shutil.rmtree(folder)
                continue
            cases.append({"case": case, "module": os.path.basename(cuda),
                          "function": function, "inputs": files,
                          "loops": loops})
    baselines = []
    for spec in args.baseline:
        name, build = spec.split("=", 1)
        run([os.path.join(build, "bin", "kiln-compile"),
             os.path.join(out, "while_solver.mlir"), "--target=cuda",
             "--cuda-arch=sm_90", "--target-cpu=x86-64-v3",
             "-o", os.path.join(out, f"while_solver.{name}.cuda.kmod")])
        os.makedirs(os.path.join(out, name, "bin"), exist_ok=True)
        shutil.copy(os.path.join(build, "bin", "kiln-run"),
                    os.path.join(out, name, "bin", "kiln-run"))
        baselines.append(name)
    shutil.rmtree(scratch)
    # The layout of an install: bin/kiln-run finds ../lib/kiln/ plug-ins.
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    shutil.copy(kiln_run, os.path.join(out, "bin", "kiln-run"))
    plugins = os.path.join(out, "lib", "kiln")
    os.makedirs(plugins, exist_ok=True)
    for name in ("libkiln_cuda_blas.so", "libkiln_cuda_dnn.so"):
        path = os.path.join(args.build_dir, "lib", "kiln", name)
        if os.path.exists(path):
            shutil.copy(path, plugins)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"cases": cases, "workload": "while_solver.fixed_point",
                   "baselines": baselines,
                   "title": solver.desc, "step": solver.step,
                   "tolerance": solver.tol_residual,
                   "max_iters": solver.max_iters}, f, indent=1)
    print(f"{len(cases)} cases in {out}")


def call(folder, case, graphs, extra=(), runner="."):
    env = dict(os.environ, KILN_CUDA_GRAPHS="1" if graphs else "0")
    outputs = os.path.join(folder, case["case"],
                           "graphs" if graphs else "host")
    command = [os.path.join(folder, runner, "bin", "kiln-run"),
               os.path.join(folder, case["module"]), "--device", "cuda",
               "--function", case["function"], "--output-dir", outputs,
               "--stats", *extra]
    for name in case["inputs"]:
        command += ["--input", os.path.join(folder, case["case"], name)]
    return run(command, env=env, check=False), outputs


def compare(np, expected, actual):
    """The largest error relative to the expected output's scale, or None
    when an output is missing or differs in shape or dtype."""
    worst = 0.0
    for name in sorted(os.listdir(expected)):
        want = np.load(os.path.join(expected, name))
        path = os.path.join(actual, name)
        if not os.path.exists(path):
            return None
        got = np.load(path)
        if got.shape != want.shape or got.dtype != want.dtype:
            return None
        if want.dtype.kind in "biu":
            worst = max(worst, float(np.any(got != want)))
            continue
        w, g = want.astype(np.float64), got.astype(np.float64)
        if np.any(np.isnan(w) != np.isnan(g)):
            return float("inf")
        scale = max(1e-30, float(np.nanmax(np.abs(w))) if w.size else 1.0)
        diff = np.abs(np.where(np.isnan(w), 0, w - g))
        worst = max(worst, float(diff.max() / scale) if w.size else 0.0)
    return worst


def stats_of(text):
    match = re.search(r"(\d+) stream waits.*?(\d+) loops as graphs", text)
    return (int(match.group(1)), int(match.group(2))) if match else (-1, -1)


def graph_calls_of(text):
    """kiln-run --stats' count of calls run as CUDA graphs (captured or
    launched again), or -1 where it prints none."""
    match = re.search(r"(\d+) calls as graphs", text)
    return int(match.group(1)) if match else -1


def jax_time(np, folder, case, meta, args):
    """The same damped fixed point under jax.lax.while_loop on the GPU, on
    the same inputs, timed the same way (median of --repeat calls on
    device-resident inputs)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("JAX: not installed")
        return
    import time
    step, tol, most = meta["step"], meta["tolerance"], meta["max_iters"]

    def residual(x, c):
        return c * jnp.cos(x) - x

    @jax.jit
    def solve(x, c):
        def test(state):
            x, it = state
            return (jnp.max(jnp.abs(residual(x, c))) >= tol) & (it < most)

        def body(state):
            x, it = state
            return x + step * residual(x, c), it + 1
        return jax.lax.while_loop(test, body, (x, jnp.int32(0)))

    ins = [jax.device_put(np.load(os.path.join(folder, case["case"], name)))
           for name in case["inputs"]]
    x, it = solve(*ins)
    x.block_until_ready()
    want = np.load(os.path.join(folder, case["case"], "expected", "out0.npy"))
    error = float(np.max(np.abs(np.asarray(x) - want)) / np.max(np.abs(want)))
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        solve(*ins)[0].block_until_ready()
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"JAX {jax.__version__} ({jax.devices()[0].device_kind}): "
          f"{times[len(times) // 2] * 1000:.3f} ms (min {times[0] * 1000:.3f}), "
          f"{int(it)} iterations, error {error:.1e} against kiln's CPU output")


def check(args):
    import numpy as np
    folder = os.path.abspath(args.dir)
    meta = json.load(open(os.path.join(folder, "cases.json")))
    workload = next((c for c in meta["cases"]
                     if c["case"] == meta["workload"]), None)
    if workload:
        print(f"\nwhile workload: {meta['title']}, kiln-run --repeat "
              f"{args.repeat} --device-resident, median ms per call")
        variants = [(False, workload, ".", "host loop"),
                    (True, workload, ".", "graph")]
        for name in meta.get("baselines", []):
            baseline = dict(workload, module=f"while_solver.{name}.cuda.kmod")
            variants += [(False, baseline, name, f"host loop, {name}"),
                         (True, baseline, name, f"graph, {name}")]
        for round_ in range(args.rounds):
            for graphs, case, runner, label in variants:
                result, _ = call(folder, case, graphs,
                                 ["--repeat", str(args.repeat),
                                  "--device-resident"], runner)
                match = re.search(r"median ([\d.]+) us \(min ([\d.]+) us",
                                  result.stdout)
                if match:
                    calls = graph_calls_of(result.stdout)
                    print(f"round {round_}: {label}: "
                          f"{float(match.group(1)) / 1000:.3f} ms "
                          f"(min {float(match.group(2)) / 1000:.3f})"
                          + (f", {calls} calls as graphs" if calls >= 0
                             else ""))
                else:
                    print(f"round {round_}: {label}: failed",
                          result.stderr[-300:])
        jax_time(np, folder, workload, meta, args)

    failures = 0
    print("| case | graphs (third call): error, waits, loops as graphs, "
          "calls as graphs | host loops: error, waits |")
    print("|---|---|---|")
    for case in meta["cases"]:
        row = []
        for graphs in (True, False) if case.get("loops", True) else (True,):
            result, outputs = call(folder, case, graphs,
                                   ["--repeat", "2"] if graphs else [])
            if result.returncode != 0:
                row.append("failed: " + (result.stderr.strip().splitlines()
                                         or ["?"])[-1][:160])
                failures += 1
                continue
            error = compare(np, os.path.join(folder, case["case"],
                                             "expected"), outputs)
            waits, loops = stats_of(result.stdout)
            calls = graph_calls_of(result.stdout)
            ok = error is not None and error <= args.tolerance
            failures += not ok
            row.append(f"{'ok' if ok else 'OFF'} {error:.1e}, {waits}"
                       + (f", {loops}, {calls}" if graphs else "")
                       if error is not None else "OFF (missing output)")
        print(f"| {case['case']} | {row[0]} | "
              f"{row[1] if len(row) > 1 else '(no loop)'} |")
    print(f"\n{failures} failing")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--programs", choices=("while", "all"), default="while")
    p.add_argument("--fuzz-seeds", metavar="A:B,S,...",
                   help="also the random programs of kiln-program-fuzz "
                        "--print SEED for SEED in [A, B) and each S")
    p.add_argument("--fuzz-grad", action="store_true",
                   help="with --fuzz-seeds, also each random program's "
                        "gradient (kiln-opt --kiln-grad: @main_grad)")
    p.add_argument("--baseline", action="append", default=[],
                   metavar="NAME=BUILD")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--repeat", type=int, default=100)
    c.add_argument("--rounds", type=int, default=3)
    c.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
