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

Each extension module links its own copy of the runtime, and a module
records its regions in the copy that loaded it: this profiler sees the
modules kiln_runtime loads; `kiln.profiler` those kiln.jit compiles.
"""

import contextlib


class Profiler:
    """The profiler of one extension module's runtime (`ext`)."""

    def __init__(self, ext):
        self._ext = ext

    def enable(self):
        """Starts collecting: each region that ends records an event."""
        self._ext.profile_set_enabled(True)

    def disable(self):
        """Stops collecting; what was collected stays."""
        self._ext.profile_set_enabled(False)

    def enabled(self):
        return self._ext.profile_enabled()

    def clear(self):
        """Forgets every event and total collected so far."""
        self._ext.profile_clear()

    def regions(self):
        """The regions that ran, most self time first: dicts with 'name',
        'count', 'total_ns' and 'self_ns' (the part of total_ns not spent in
        other regions inside it; the self times add up to the time
        profiled)."""
        return self._ext.profile_regions()

    def summary(self, top=10):
        """The table kiln-run --profile-summary prints: the `top` regions
        by self time with their share, count and total time, and one line
        for the rest."""
        return self._ext.profile_summary(int(top))

    def write_trace(self, path):
        """Writes the events collected to `path` as a Chrome trace
        (OSError when it cannot be written)."""
        self._ext.profile_write_trace(str(path))

    @contextlib.contextmanager
    def profile(self, trace=None, clear=True):
        """Collects while the block runs (from nothing, unless
        clear=False), then stops and, with `trace`, writes the trace
        there."""
        if clear:
            self.clear()
        self.enable()
        try:
            yield self
        finally:
            self.disable()
        if trace is not None:
            self.write_trace(trace)


def _bind(ext):
    """This module's functions, bound to `ext`'s runtime."""
    profiler = Profiler(ext)
    return {name: getattr(profiler, name)
            for name in ("enable", "disable", "enabled", "clear", "regions",
                         "summary", "write_trace", "profile")}


from . import _runtime  # noqa: E402

globals().update(_bind(_runtime))

__all__ = ["Profiler", "enable", "disable", "enabled", "clear", "regions",
           "summary", "write_trace", "profile"]
