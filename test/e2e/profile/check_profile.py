"""End-to-end test of profiling: kiln-compile --profile, kiln-run --profile
and --profile-summary on step.mlir, and the errors around them.

Usage: check_profile.py MODE KILN_COMPILE KILN_RUN WORK_DIR
  trace       compile step.mlir with --profile, run it (one call and two
              repeated ones, profiled, 5 loop iterations each) with
              --profile and --profile-summary; check that the trace is JSON of complete
              events with the expected names and counts, durations >= 0,
              each region inside the one holding it (the loop's body inside
              the loop, everything inside a call), and that the summary's
              shares add up to 100%.
  unprofiled  a module compiled without --profile: kiln-run --profile-trace and
              --profile-summary fail with a message saying to recompile,
              and write no trace.
  cuda        kiln-compile --profile --target=cuda is refused as not
              supported.
"""

import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "step.mlir")
CALLS = 2          # --repeat 2 (the first call is not profiled)
ITERATIONS = 5     # the loop's trip count, input %n


def run(command, expect_status=0):
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != expect_status:
        sys.exit("expected exit status %d, got %d from %s\n%s%s" % (
            expect_status, result.returncode, " ".join(command),
            result.stdout, result.stderr))
    return result


def check(condition, message):
    if not condition:
        sys.exit("FAIL: " + message)


def line_of(text):
    """The line of step.mlir where `text` first appears."""
    with open(PROGRAM) as program:
        for number, line in enumerate(program, 1):
            if text in line:
                return number
    raise AssertionError(text)


def write_inputs(work):
    rng = np.random.default_rng(7)
    paths = []
    for name, shape in (("x", (64, 128)), ("w", (128, 256)), ("b", (256,))):
        path = os.path.join(work, name + ".npy")
        np.save(path, rng.standard_normal(shape).astype(np.float32))
        paths.append(path)
    return paths


def nanoseconds(micros):
    """A trace time (microseconds, three decimals) as integer nanoseconds."""
    return int(round(float(micros) * 1000))


def check_nesting(events):
    """Per thread, in start order: each event lies inside the innermost
    event still open, or starts a new top-level one, which must be a call.
    Returns each event's enclosing event names."""
    check(all(e["ph"] == "X" for e in events), "events other than 'X'")
    check(all(e["dur"] >= 0 and e["ts"] >= 0 for e in events),
          "a negative time or duration")
    enclosing = []
    by_thread = {}
    for event in events:
        by_thread.setdefault((event["pid"], event["tid"]), []).append(event)
    for thread_events in by_thread.values():
        stack = []
        for event in sorted(thread_events, key=lambda e: (
                nanoseconds(e["ts"]), -nanoseconds(e["dur"]))):
            begin = nanoseconds(event["ts"])
            end = begin + nanoseconds(event["dur"])
            while stack and stack[-1][1] <= begin and stack[-1][0] < end:
                stack.pop()
            if stack:
                check(stack[-1][0] <= begin and end <= stack[-1][1],
                      "%r overlaps %r without nesting in it" % (
                          event["name"], stack[-1][2]))
            else:
                check(event["name"].startswith("call @"),
                      "%r is outside every call" % event["name"])
            enclosing.append((event["name"], [s[2] for s in stack]))
            stack.append((begin, end, event["name"]))
    return enclosing


def check_summary(output):
    rows = re.findall(
        r"^\s+([0-9.]+)\s+([0-9.]+)%\s+(\d*)\s+([0-9.]*)\s+(.+)$",
        output, re.MULTILINE)
    check(rows, "no summary rows in:\n" + output)
    check(len(rows) <= 11, "more than 10 regions and the rest shown")
    shares = sum(float(row[1]) for row in rows)
    # Each share is rounded to 0.1%.
    check(abs(shares - 100.0) <= 0.05 * len(rows) + 1e-9,
          "the shares add up to %.2f%%:\n%s" % (shares, output))
    counts = {row[4]: row[2] for row in rows}
    check(counts.get("call @step") == str(CALLS),
          "the summary does not count %d calls of @step:\n%s" % (CALLS,
                                                                 output))
    self_times = [float(row[0]) for row in rows if row[2]]
    check(self_times == sorted(self_times, reverse=True),
          "the summary is not sorted by self time:\n" + output)


def mode_trace(compiler, runner, work):
    module = os.path.join(work, "step.kmod")
    trace = os.path.join(work, "trace.json")
    run([compiler, PROGRAM, "--profile", "-o", module])
    inputs = write_inputs(work)
    command = [runner, module]
    for path in inputs:
        command += ["--input", path]
    command += ["--input", str(ITERATIONS), "--output-dir",
                os.path.join(work, "out"), "--repeat", "2",
                "--profile-trace", trace, "--profile-summary"]
    output = run(command).stdout
    with open(trace) as file:
        document = json.load(file)
    events = document["traceEvents"]
    names = [event["name"] for event in events]

    def count(pattern):
        return sum(1 for name in names if re.fullmatch(pattern, name))

    loop = "while @ step.mlir:%d" % line_of("= kiln.while")
    branch = "cond @ step.mlir:%d" % line_of("= kiln.cond")
    expected = {
        r"call @step": CALLS,
        r"dnnl_sgemm 64x256x128 @ step\.mlir:%d" % line_of("= kiln.matmul"):
            CALLS,
        r"fused: add\+relu 64x256 @ step\.mlir:%d" % line_of("kiln.add %m"):
            CALLS,
        re.escape(loop): CALLS,
        re.escape(branch): CALLS * ITERATIONS,
        r"tanh 64x256 @ .*": CALLS * 3,      # even iterations 0, 2, 4
        r"sigmoid 64x256 @ .*": CALLS * 2,
        r"fused: reduce_sum\+div 64x256 @ .*": CALLS * ITERATIONS,
    }
    for pattern, times in expected.items():
        check(count(pattern) == times, "%d events match %r, expected %d "
              "(names: %s)" % (count(pattern), pattern, times,
                               sorted(set(names))))

    for name, outer in check_nesting(events):
        if name in (branch,) or name.startswith("fused: reduce_sum"):
            check(loop in outer, "%r is not inside the loop" % name)
        if name.startswith(("tanh", "sigmoid")):
            check(outer and outer[-1] == branch,
                  "%r is not inside the conditional" % name)
    check_summary(output)
    print("trace: %d events, %d distinct regions; summary checked" % (
        len(events), len(set(names))))


def mode_unprofiled(compiler, runner, work):
    module = os.path.join(work, "plain.kmod")
    trace = os.path.join(work, "plain-trace.json")
    if os.path.exists(trace):
        os.remove(trace)
    run([compiler, PROGRAM, "-o", module])
    inputs = write_inputs(work)
    command = [runner, module]
    for path in inputs:
        command += ["--input", path]
    command += ["--input", str(ITERATIONS)]
    for option in (["--profile-trace", trace], ["--profile-summary"]):
        result = run(command + option, expect_status=1)
        check("was compiled without --profile" in result.stderr and
              "kiln-compile --profile" in result.stderr,
              "unclear message: " + result.stderr)
        check(not result.stdout, "it ran anyway: " + result.stdout)
    check(not os.path.exists(trace), "a trace was written")
    print("unprofiled module refused: " + result.stderr.strip())


def mode_cuda(compiler, runner, work):
    result = run([compiler, PROGRAM, "--profile", "--target=cuda", "-o",
                  os.path.join(work, "cuda.kmod")], expect_status=2)
    check("--profile is not supported for --target=cuda" in result.stderr,
          "unclear message: " + result.stderr)
    print("CUDA refused: " + result.stderr.strip())


def main():
    mode, compiler, runner, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    {"trace": mode_trace, "unprofiled": mode_unprofiled,
     "cuda": mode_cuda}[mode](compiler, runner, work)


if __name__ == "__main__":
    main()
