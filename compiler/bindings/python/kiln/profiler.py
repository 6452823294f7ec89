"""kiln.profiler: the timings of functions compiled with
kiln.jit(..., profile=True).

    step = kiln.jit(train_step, profile=True)
    with kiln.profiler.profile("step.json"):
        for _ in range(10):
            params = step(params, x, y)
    print(kiln.profiler.summary())

kiln.jit's functions run in kiln_runtime's runtime, so this is
kiln_runtime.profiler (enable, disable, enabled, clear, regions, summary,
write_trace, profile), which also sees the modules kiln_runtime loads.
"""

from kiln_runtime.profiler import (enable, disable, enabled, clear, regions,
                                   summary, write_trace, profile)

__all__ = ["enable", "disable", "enabled", "clear", "regions", "summary",
           "write_trace", "profile"]
