#!/usr/bin/env python3
"""kiln.while loops on a CUDA GPU as CUDA graphs, against host loops.

Two steps, so that the GPU machine needs neither the compiler nor LLVM:

    python3 bench/graph_loops_cuda.py prepare DIR [--build-dir build]
            [--programs while|all|NAME,...] [--fuzz-seeds A:B,S,...]
            [--fuzz-grad] [--baseline NAME=BUILD ...]
        (on any machine with kiln built) compiles every public function of
        the end-to-end programs that hold a kiln.while (test/e2e; with
        --programs all, of every end-to-end program the CUDA backend
        compiles; with --programs NAME,..., of test/e2e/NAME.mlir for each
        NAME; with --fuzz-seeds A:B, also the random programs of
        `kiln-program-fuzz --print SEED` for SEED in [A, B), and for each
        further seed S in the comma-separated list, that it
        compiles; with --fuzz-grad, also each one's gradient, kiln-grad's
        @main_grad, where kiln-grad derives it) and the data-dependent while of bench/workloads.py for
        --target=cuda (sm_90 PTX, host code for x86-64-v3) and for the CPU,
        draws inputs as the end-to-end harness does (floats in [-2, 2],
        integers in [-8, 8], fair booleans; bf16 inputs as f32 files, which
        kiln-run rounds to bf16), and keeps the CPU module's outputs as
        the expected ones; the function's kiln.e2e_atol and
        kiln.e2e_half_rtol go with them; copies kiln-run and the CUDA plug-ins
        into DIR. --baseline NAME=BUILD also compiles the workload with
        BUILD/bin/kiln-compile (another revision's build directory) and
        copies its BUILD/bin/kiln-run (the runtime of that revision, which
        its module calls), timed beside this one's.

    python3 bench/graph_loops_cuda.py prepare DIR --target cuda-on-cpu ...
        the same cases with the CUDA backend's kernels run on the host
        (kiln-compile --target=cuda-on-cpu), without the workload, for
        checking this script and the kernels on a machine without a GPU
        (test/graph_loops_on_cpu.sh); check runs them with --device cpu.

    python3 bench/graph_loops_cuda.py check DIR [--repeat 200] [--jobs N]
        (on the GPU machine, numpy only) runs each CUDA module with its
        loops as graphs (the default) and, where the program has a loop, as
        host loops (KILN_CUDA_GRAPHS=0), compares both with the expected
        outputs, reports how many loops ran as graphs and the stream waits
        of each call, after timing the workload both ways (and each
        baseline's both ways) with kiln-run --device-resident; the cases
        then run N at a time (default: the CPUs, at most 8). With graphs
        each module is called three times (kiln-run --repeat 2) and the
        last call's outputs are compared: the runtime captures a call whose
        host code only queues device work at its second call and launches
        that graph again at the third. An output passes within --tolerance
        of its largest magnitude, or element by element within the
        end-to-end harness's CUDA tolerance (test/e2e/README.md; f16 and
        bf16 two steps of their precision, one for each side's rounding,
        or the function's kiln.e2e_half_rtol). A module whose loops hold
        cuDNN calls (which ask kiln_cuda_graph_loops_planned) also runs
        once with KILN_CUDA_CAPTURE_UNPLANNED=1: its loops are captured at
        that first call, the calls' plans made outside the capture. Exit
        status 1 if any output is off.
"""

import argparse
import concurrent.futures
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


def tensor_types(text):
    """[(dims, dtype)] of the tensor types in text (None for a dynamic
    extent)."""
    types = []
    for tensor in re.findall(r"tensor<([^>]*)>", text):
        parts = tensor.split("x")
        dims = [int(d) if d.isdigit() else None for d in parts[:-1]]
        types.append((dims, parts[-1]))
    return types


def signatures(text):
    """(name, inputs, results, attributes) of each public function of a
    kiln program: inputs and results as tensor_types gives them, and the
    end-to-end harness's tolerance attributes (kiln.e2e_atol,
    kiln.e2e_half_rtol) as {name: value}."""
    found = []
    for match in re.finditer(
            r"^\s*func\.func @(\w+)\(([^)]*)\)\s*(?:->\s*(\([^)]*\)|"
            r"tensor<[^>]*>))?\s*(?:attributes\s*\{([^}]*)\})?", text, re.M):
        attributes = {name: float(value) for name, value in re.findall(
            r"kiln\.(e2e_atol|e2e_half_rtol)\s*=\s*([-+.\deE]+)",
            match.group(4) or "")}
        found.append((match.group(1), tensor_types(match.group(2)),
                      tensor_types(match.group(3) or ""), attributes))
    return found


def random_input(np, rng, dims, dtype):
    if dtype.startswith("f") or dtype == "bf16":
        # A bf16 input travels as <f4: kiln-run rounds it to bf16.
        return rng.uniform(-2, 2, dims).astype(DTYPES.get(dtype, "<f4"))
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

    if args.target == "cuda-on-cpu" and args.baseline:
        raise SystemExit("--baseline times the GPU workload, which "
                         "--target=cuda-on-cpu leaves out")
    out = os.path.abspath(args.dir)
    os.makedirs(out, exist_ok=True)
    scratch = os.path.join(out, "cpu")
    os.makedirs(scratch, exist_ok=True)
    compile_ = os.path.join(args.build_dir, "bin", "kiln-compile")
    kiln_run = os.path.join(args.build_dir, "bin", "kiln-run")
    on_cpu = args.target == "cuda-on-cpu"
    e2e = os.path.join(ROOT, "test", "e2e")
    if args.programs == "while":
        programs = PROGRAMS
    elif args.programs == "all":
        with open(os.path.join(e2e, "cuda_exclusions.txt")) as f:
            excluded = {line.strip() for line in f
                        if line.strip() and not line.startswith("#")}
        programs = sorted(p for p in os.listdir(e2e) if p.endswith(".mlir")
                          and p[:-5] not in excluded and p not in excluded)
    else:
        programs = [name + ".mlir" for name in args.programs.split(",")]
        for name in programs:
            if not os.path.exists(os.path.join(e2e, name)):
                raise SystemExit(f"--programs: no test/e2e/{name}")
    sources = [(p[:-5], open(os.path.join(e2e, p)).read()) for p in programs]
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
                errors = [line for line in derived.stderr.splitlines()
                          if "error:" in line]
                print(f"fuzz_{seed}_grad: left out (kiln-grad refuses it):",
                      (errors or derived.stderr.strip().splitlines() or
                       ["?"])[0])
                continue
            sources.append((f"fuzz_{seed}_grad", derived.stdout))
    solver = W.WhileSolver(False)
    if not on_cpu:
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
        # cuda-on-cpu: the kernels run on the host, at -O1 as
        # test/fuzz/random_attention.py compiles them.
        target = (["--target=cuda-on-cpu", "-O1"] if on_cpu else
                  ["--target=cuda", "--cuda-arch=sm_90",
                   "--target-cpu=x86-64-v3"])
        compiled = run([compile_, source, *target, "-o", cuda], check=False)
        if compiled.returncode != 0:
            # A random program may use what the CUDA backend refuses.
            if not program.startswith("fuzz_"):
                raise RuntimeError(compiled.stderr)
            print(f"{program}: left out (--target=cuda refuses it):",
                  compiled.stderr.strip().splitlines()[-1:])
            continue
        run([compile_, source, "-o", cpu])
        loops = "kiln.while" in text
        # A loop holding cuDNN calls asks whether they have run
        # (kiln_cuda_graph_loops_planned): such a module also runs with
        # KILN_CUDA_CAPTURE_UNPLANNED=1, its loops captured from the first
        # run and the plans made outside the capture.
        with open(cuda, "rb") as f:
            unplanned = (not on_cpu and
                         b"kiln_cuda_graph_loops_planned" in f.read())
        for function, inputs, results, attributes in signatures(text):
            if program.endswith("_grad") and function == "main":
                continue  # The program's own case has it.
            case = f"{program}.{function}"
            # A dynamic extent has no size to draw.
            if any(None in dims for dims, _ in inputs):
                print(f"{case}: left out (dynamic input)")
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
                          "loops": loops and not on_cpu,
                          "unplanned": unplanned,
                          "results": [dtype for _, dtype in results],
                          **attributes})
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
                   "device": "cpu" if on_cpu else "cuda",
                   "baselines": baselines,
                   "title": solver.desc, "step": solver.step,
                   "tolerance": solver.tol_residual,
                   "max_iters": solver.max_iters}, f, indent=1)
    print(f"{len(cases)} cases in {out}")


def call(folder, case, graphs, extra=(), runner=".", device="cuda",
         unplanned=False):
    env = dict(os.environ, KILN_CUDA_GRAPHS="1" if graphs else "0",
               KILN_CUDA_CAPTURE_UNPLANNED="1" if unplanned else "0")
    outputs = os.path.join(folder, case["case"],
                           "unplanned" if unplanned else
                           "graphs" if graphs else "host")
    command = [os.path.join(folder, runner, "bin", "kiln-run"),
               os.path.join(folder, case["module"]), "--device", device,
               "--function", case["function"], "--output-dir", outputs,
               "--stats", *extra]
    for name in case["inputs"]:
        command += ["--input", os.path.join(folder, case["case"], name)]
    return run(command, env=env, check=False), outputs


def half_step(np, values, bf16):
    """The spacing of f16 or bf16 numbers at each of values."""
    mantissa, smallest = (7, -126) if bf16 else (10, -14)
    _, exponent = np.frexp(np.where(np.isfinite(values), values, 0))
    return np.ldexp(1.0, np.maximum(exponent - 1, smallest) - mantissa)


def within_e2e_tolerance(np, want, got, dtype, case):
    """Whether every element of got is within the end-to-end harness's CUDA
    tolerance of want (test/support/TensorCompare.cpp): f32 within
    atol + 1e-4 |want|, atol 1e-5 or the function's kiln.e2e_atol; f16 and
    bf16 within atol + kiln.e2e_half_rtol |want| where the function sets it,
    or within two steps of their precision (the harness allows one step
    against the exact value; here the expected output is the CPU's, which
    may be a step away from it too); f64 within 1e-11."""
    atol = max(1e-5, case.get("e2e_atol", 0.0))
    half = dtype in ("f16", "bf16")
    if dtype == "f64":
        rtol = atol = 1e-11
    elif half and "e2e_half_rtol" in case:
        rtol = case["e2e_half_rtol"]
    elif half:
        rtol = atol = 1e-11
    else:
        rtol = 1e-4
    bound = atol + rtol * np.abs(want)
    if half:
        bound = np.maximum(bound, 2 * half_step(np, want, dtype == "bf16"))
    same = (want == got) | (np.isnan(want) & np.isnan(got))
    with np.errstate(invalid="ignore"):
        return bool(np.all(same | (np.abs(want - got) <= bound)))


def compare(np, expected, actual, case, tolerance):
    """(error, ok): the largest error relative to an expected output's
    scale (None when an output is missing or differs in shape or dtype),
    and whether each output is within tolerance of its scale or within the
    end-to-end harness's own tolerance (within_e2e_tolerance)."""
    worst, ok = 0.0, True
    results = case.get("results", [])
    for name in sorted(os.listdir(expected)):
        want = np.load(os.path.join(expected, name))
        path = os.path.join(actual, name)
        if not os.path.exists(path):
            return None, False
        got = np.load(path)
        if got.shape != want.shape or got.dtype != want.dtype:
            return None, False
        if want.dtype.kind in "biu":
            off = bool(np.any(got != want))
            worst, ok = max(worst, float(off)), ok and not off
            continue
        w, g = want.astype(np.float64), got.astype(np.float64)
        if np.any(np.isnan(w) != np.isnan(g)):
            return float("inf"), False
        scale = max(1e-30, float(np.nanmax(np.abs(w))) if w.size else 1.0)
        with np.errstate(invalid="ignore"):
            diff = np.where(np.isnan(w) | (w == g), 0, np.abs(w - g))
        error = float(diff.max() / scale) if w.size else 0.0
        worst = max(worst, error)
        # bf16 results come as <f4 files: their dtype is the signature's.
        index = int(name[3:-4]) if re.fullmatch(r"out\d+\.npy", name) else -1
        dtype = (results[index] if 0 <= index < len(results) else
                 {"float16": "f16", "float64": "f64"}.get(want.dtype.name,
                                                          "f32"))
        ok = ok and (error <= tolerance or
                     within_e2e_tolerance(np, w, g, dtype, case))
    return worst, ok


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

    device = meta.get("device", "cuda")
    if device == "cuda":
        print("| case | graphs (third call): error, waits, loops as graphs, "
              "calls as graphs | host loops: error, waits | loops holding "
              "cuDNN calls captured from their first run "
              "(KILN_CUDA_CAPTURE_UNPLANNED=1), first call |")
    else:
        print("| case | the kernels on the host: error |")
    print("|---|---|" + ("---|---|" if device == "cuda" else ""), flush=True)
    # The cases run --jobs at a time (each kiln-run process opens a CUDA
    # context of its own, most of a small case's time), printed in order.
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for line, failed in pool.map(
                lambda case: check_case(np, folder, case, device,
                                        args.tolerance), meta["cases"]):
            print(line, flush=True)
            failures += failed
    print(f"\n{failures} failing")
    return 1 if failures else 0


def check_case(np, folder, case, device, tolerance):
    """(the case's row of the report, how many of its calls failed)."""
    row, failures = [], 0
    modes = [(True, False), (False, False)] if case.get("loops", True) \
        else [(True, False)]
    if case.get("unplanned"):
        modes.append((True, True))
    for graphs, unplanned in modes:
        # Captured from the first run, the first call is the one whose
        # capture made the plans outside it: it runs alone.
        result, outputs = call(folder, case, graphs,
                               ["--repeat", "2"] if graphs and
                               not unplanned and device == "cuda" else [],
                               device=device, unplanned=unplanned)
        if result.returncode != 0:
            row.append("failed: " + (result.stderr.strip().splitlines()
                                     or ["?"])[-1][:160])
            failures += 1
            continue
        error, ok = compare(np, os.path.join(folder, case["case"],
                                             "expected"), outputs, case,
                            tolerance)
        failures += not ok
        if error is None:
            row.append("OFF (missing output)")
            continue
        row.append(f"{'ok' if ok else 'OFF'} {error:.1e}")
        if device == "cuda":
            waits, loops = stats_of(result.stdout)
            calls = graph_calls_of(result.stdout)
            row[-1] += f", {waits}" + (f", {loops}, {calls}" if graphs else "")
    if device != "cuda":
        return f"| {case['case']} | {row[0]} |", failures
    return (f"| {case['case']} | {row[0]} | "
            f"{row[1] if len(row) > 1 else '(no loop)'} | "
            f"{row[2] if len(row) > 2 else '-'} |", failures)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("dir")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--programs", default="while", metavar="while|all|NAMES",
                   help="the e2e programs that hold a kiln.while (while), "
                        "every one the CUDA backend compiles (all), or "
                        "those named (comma-separated, test/e2e/NAME.mlir)")
    p.add_argument("--target", choices=("cuda", "cuda-on-cpu"),
                   default="cuda",
                   help="cuda-on-cpu: the CUDA backend's kernels run on the "
                        "host (kiln-compile --target=cuda-on-cpu), for "
                        "checking this script and the kernels without a "
                        "GPU; no workload, no loops as graphs")
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
    c.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                   help="cases checked at once (default: the CPUs, at most "
                        "8); the workload is timed alone before them")
    args = parser.parse_args()
    if args.step == "check" and args.jobs < 1:
        parser.error("--jobs needs a positive count")
    if args.step == "prepare":
        prepare(args)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
