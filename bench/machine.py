"""What the benchmark reports say about the machine and the build they ran
on: the CPU's model name and the git revision of the checkout."""

import platform
import subprocess


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, else what platform says."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision(path):
    """The short revision of the checkout holding `path`, "" if none."""
    try:
        return subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""
