"""What the SPMD scripts beside this file share (partitioned_run.py,
pipeline_run.py)."""

import os
import subprocess
import sys


def run(command):
    """Runs `command`; exits with its output when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(command), result.stdout,
                                       result.stderr))
    return result.stdout


def tool_arguments():
    """(kiln-opt, kiln-compile, kiln-run, mpirun, program, work directory)
    from the command line of a script run as SCRIPT KILN_OPT KILN_COMPILE
    KILN_RUN MPIRUN PROGRAM WORKDIR; exits 77 (skip) without mpirun. The
    work directory exists on return."""
    opt, compile_tool, run_tool, mpirun, program, work = sys.argv[1:7]
    if not mpirun:
        print("SKIP: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)")
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    return opt, compile_tool, run_tool, mpirun, program, work
