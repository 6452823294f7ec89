"""kiln_runtime.profiler: the timings of modules compiled with profiling.

A module compiled with `kiln-compile --profile` (or `kiln.jit(...,
profile=True)`) times each of its regions - every fused loop nest, oneDNN
call and loop of kiln.for or kiln.while, and every call of its functions -
while the profiler is on. The profiler is process-wide and off by default;
a module compiled without profiling has no regions.

    from kiln_runtime import profiler
    with profiler.profile("step.json"):     # on, then written and off
        for _ in range(10):
            step(x, w)
    print(profiler.summary())              # the top regions by self time

The trace is Chrome's trace event format, which chrome://tracing and
ui.perfetto.dev open, as torch.profiler's and jax.profiler's traces.

kiln_runtime and kiln share one runtime (libkiln_runtime.so), so this
profiler sees the modules kiln_runtime loads and the functions kiln.jit
compiles alike; `kiln.profiler` is this module.
"""

import contextlib

from . import _runtime


def enable():
    """Starts collecting: each region that ends records an event."""
    _runtime.profile_set_enabled(True)


def disable():
    """Stops collecting; what was collected stays."""
    _runtime.profile_set_enabled(False)


def enabled():
    return _runtime.profile_enabled()


def clear():
    """Forgets every event and total collected so far."""
    _runtime.profile_clear()


def regions():
    """The regions that ran, most self time first: dicts with 'name',
    'count', 'total_ns' and 'self_ns' (the part of total_ns not spent in
    other regions inside it; the self times add up to the time
    profiled)."""
    return _runtime.profile_regions()


def summary(top=10):
    """The table kiln-run --profile-summary prints: the `top` regions
    by self time with their share, count and total time, and one line
    for the rest."""
    return _runtime.profile_summary(int(top))


def write_trace(path):
    """Writes the events collected to `path` as a Chrome trace
    (OSError when it cannot be written)."""
    _runtime.profile_write_trace(str(path))


@contextlib.contextmanager
def profile(trace=None, clear=True):
    """Collects while the block runs (from nothing, unless clear=False),
    then stops and, with `trace`, writes the trace there."""
    if clear:
        _runtime.profile_clear()
    enable()
    try:
        yield
    finally:
        disable()
    if trace is not None:
        write_trace(trace)


__all__ = ["enable", "disable", "enabled", "clear", "regions", "summary",
           "write_trace", "profile"]
