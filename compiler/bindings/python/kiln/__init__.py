"""kiln: an ahead-of-time compiler for machine-learning programs, from Python.

    import numpy as np
    import kiln
    import kiln.numpy as knp

    @kiln.jit
    def step(w, x, y):
        loss, g = kiln.value_and_grad(
            lambda w: knp.mean((x @ w - y) ** 2))(w)
        return loss, w - 0.1 * g

    loss, w = step(w, x, y)       # traced and compiled once per signature

Functions are traced by kiln's C++ tracer into kiln IR (`jit(f).lower(...)`
shows it), differentiated by its autodiff pass (also through while_loop),
fused and compiled to native code, and run through kiln's runtime.
`kiln_runtime` loads saved modules without the compiler. See docs/python.md.
"""

from . import _core
from ._core import (Tensor, TraceError, ConcretizationError, JitError,
                    TRACED_DTYPES)
from . import numpy
from . import _tensor  # noqa: F401  (numpy's operators on Tensor)
from ._jit import jit, Lowered, Compiled
from ._control import cond, while_loop, fori_loop, scan
from ._grad import grad, jvp, value_and_grad, vjp, checkpoint, remat
from ._vmap import vmap, jacfwd, jacrev, hessian
from ._tree import flatten as tree_flatten, tree_map, leaves as tree_leaves
from . import lax
from . import ops
from . import nn
from . import optim
from . import random
from . import feature_column
from . import distributed
from . import profiler


def is_tracing():
    """True while a function is being traced (inside kiln.jit, kiln.grad,
    ...), i.e. when kiln.numpy records operations instead of running
    them."""
    return _core._kiln.is_tracing()


__all__ = ["jit", "grad", "value_and_grad", "vjp", "jvp", "vmap", "jacfwd",
           "jacrev", "hessian", "checkpoint", "remat", "cond", "while_loop",
           "fori_loop", "scan", "numpy", "nn", "optim", "Tensor", "TraceError",
           "ConcretizationError", "JitError", "Lowered", "Compiled",
           "tree_flatten", "tree_map", "tree_leaves", "is_tracing", "lax",
           "TRACED_DTYPES", "profiler", "random", "ops", "feature_column"]
