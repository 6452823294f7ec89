#!/usr/bin/env python3
"""Profiles one workload of workloads.py: its kiln IR compiled with
`kiln-compile --profile`, run with `kiln-run --profile-trace TRACE
--profile-summary` on the benchmark's inputs (the first call checked against
the numpy reference, then `--repeat` calls), the summary printed.

  /usr/bin/python3 bench/profile_workload.py --workload transformer \
      --trace bench/traces/transformer_layer.json

The trace opens in ui.perfetto.dev or chrome://tracing (docs/profiling.md).
(Not named profile.py: bench/ is on the path of bench.py's anchors, and a
module named `profile` hides the standard library's, which torch.compile
imports.)
"""

import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench as B  # noqa: E402
import workloads as W  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", default="transformer",
                   help="a workload name of workloads.py (default transformer)")
    p.add_argument("--quick", action="store_true", help="the small sizes")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=20,
                   help="calls after the first one (default 20)")
    p.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    p.add_argument("--work-dir", default=None,
                   help="where the module and .npy files go (default BUILD/profile-work)")
    p.add_argument("--trace", required=True, help="the Chrome trace to write")
    args = p.parse_args()

    work = args.work_dir or os.path.join(args.build_dir, "profile-work")
    os.makedirs(work, exist_ok=True)
    wl = next((w for w in W.all_workloads(args.quick) if w.name == args.workload), None)
    if wl is None:
        sys.exit(f"profile: no workload named {args.workload!r}")
    kiln = B.Kiln(args.build_dir, work, args.threads)
    ins = wl.inputs(np.random.default_rng(20261122))
    paths = []
    for i, value in enumerate(ins):
        paths.append(os.path.join(work, f"{wl.name}.in{i}.npy"))
        np.save(paths[-1], value)
    source = kiln.source(wl)
    module = os.path.join(work, f"{wl.name}.profile.kmod")
    kiln.tool("kiln-compile", source, "--profile", "-o", module)

    out_dir = os.path.join(work, f"{wl.name}.out")
    trace = os.path.abspath(args.trace)
    os.makedirs(os.path.dirname(trace), exist_ok=True)
    run = ["--function", wl.function, "--output-dir", out_dir,
           "--repeat", args.repeat, "--profile-trace", trace, "--profile-summary"]
    output = kiln.tool("kiln-run", module, *[a for path in paths for a in ("--input", path)],
                       *run)
    outs = [np.load(path) for _, path in
            re.findall(r"^(.*?): \S+ saved to (.*)$", output, re.M)]
    err, ok = B.check(wl, outs, wl.reference(ins), ins)
    if not ok:
        sys.exit(f"profile: the outputs are wrong (max rel. error {err:.2e})")
    print(f"== {wl.title} ({wl.desc}), {args.threads} thread(s), "
          f"1 + {args.repeat} calls; outputs checked (max rel. error {err:.1e})")
    print("\n".join(line for line in output.splitlines() if "saved to" not in line))
    print(f"trace: {args.trace}")


if __name__ == "__main__":
    main()
