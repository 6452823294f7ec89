"""kiln.profiler: the timings of functions compiled with
kiln.jit(..., profile=True).

    step = kiln.jit(train_step, profile=True)
    with kiln.profiler.profile("step.json"):
        for _ in range(10):
            params = step(params, x, y)
    print(kiln.profiler.summary())

The same functions as kiln_runtime.profiler (enable, disable, enabled,
clear, regions, summary, write_trace, profile), for the runtime that runs
kiln.jit's modules.
"""

from kiln_runtime.profiler import Profiler, _bind

from . import _kiln

globals().update(_bind(_kiln))

__all__ = ["Profiler", "enable", "disable", "enabled", "clear", "regions",
           "summary", "write_trace", "profile"]
