"""What the SPMD scripts beside this file share (partitioned_run.py,
pipeline_run.py)."""

import subprocess
import sys


def run(command):
    """Runs `command`; exits with its output when it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(command), result.stdout,
                                       result.stderr))
    return result.stdout
