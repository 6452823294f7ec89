"""Running traced code outside a trace: the one place that does it.

kiln.numpy's functions, kiln.lax, kiln.nn and kiln.random, the control
flow primitives and the transforms (grad, vmap, checkpoint, ...) record
ops into the trace being built. Called outside a trace, on concrete
arrays, each is compiled with kiln.jit and run at once, and the results
are numpy arrays: correct but slow, meant for trying things out.

`eager(fn)` is that dispatch. Callers differ only in which arguments
become inputs of the compiled function (the rest are baked into it) and
in whether the compiled functions are kept for later calls:

  arrays          kiln.numpy's rule: numpy arrays and scalars, also as the
                  items of a list or tuple; Python numbers, shapes, axes
                  and dtypes are baked in (compiled once per value).
  positional_operands
                  control flow's: the positional arguments other than
                  callables, None and Python ints (functions, loop bounds
                  and lengths are baked in, as are keyword arguments).
  every_argument  the transforms': every argument, a pytree of arrays and
                  Python numbers, as kiln.jit takes it.
"""

import functools

import numpy as np

from . import _kiln
from ._jit import jit


def arrays(key, value):
    """A numpy array or scalar, or a non-empty list or tuple of them."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(
            isinstance(v, (np.ndarray, np.generic)) for v in value)
    return isinstance(value, (np.ndarray, np.generic))


def positional_operands(key, value):
    """A positional argument that is not a callable, None or a Python int
    (a bool is an operand)."""
    return isinstance(key, int) and not (
        callable(value) or value is None or
        isinstance(value, int) and not isinstance(value, bool))


def every_argument(key, value):
    """Any argument."""
    return True


def _freeze(value):
    """A hashable key for a static argument. Numbers keep their type: 2,
    2.0 and True are equal in Python but trace differently."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(_freeze(v) for v in value)
    if isinstance(value, np.dtype) or isinstance(value, type):
        return str(value)
    return (type(value), value)


def eager(fn=None, *, name=None, inputs=arrays, cache=True):
    """Makes `fn` callable outside a trace, where it is compiled with
    kiln.jit (named `name`, by default fn's name) and run; inside a trace
    it is fn itself. `inputs(key, value)` says which arguments (key: the
    position, or the keyword's name) become inputs of the compiled
    function; the others are baked in. With `cache`, the compiled function
    is kept per function and baked-in values (which must then be
    hashable once frozen: lists, dicts and dtypes are); without it, a call
    compiles anew (callables made per call, as control flow takes them,
    would otherwise pile up in the cache). Functions that take no arrays
    (zeros, arange, ...) compile with no inputs. As a decorator:
    `@eager` or `@eager(name=..., inputs=..., cache=...)`."""
    if fn is None:
        return functools.partial(eager, name=name, inputs=inputs,
                                 cache=cache)
    name = name or fn.__name__
    compiled_by_key = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _kiln.is_tracing():
            return fn(*args, **kwargs)
        named = list(enumerate(args)) + sorted(kwargs.items())
        dynamic = tuple(k for k, a in named if inputs(k, a))

        def apply(*values):
            full, kw = list(args), dict(kwargs)
            for k, value in zip(dynamic, values):
                if isinstance(k, int):
                    full[k] = value
                else:
                    kw[k] = value
            return fn(*full, **kw)
        if cache:
            key = (len(args), dynamic, tuple((k, _freeze(a)) for k, a in
                                             named if k not in dynamic))
            compiled = compiled_by_key.get(key)
            if compiled is None:
                compiled = compiled_by_key[key] = jit(apply, name=name)
        else:
            compiled = jit(apply, name=name)
        values = dict(named)
        return compiled(*(values[k] for k in dynamic))
    return wrapper
