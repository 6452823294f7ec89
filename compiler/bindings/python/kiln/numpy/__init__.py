"""kiln.numpy: numpy's API on traced arrays (`import kiln.numpy as knp`).

Every function records kiln ops into the trace being built (inside
kiln.jit, kiln.grad, ...). The ops, numpy-style broadcasting and dtype
promotion are the C++ tracer's (docs/python.md lists the rules: they follow
JAX, so `int32 + float32` is float32 and Python numbers adopt the array's
dtype). Called outside a trace on concrete arrays, a function is compiled
and run at once (the result is a numpy array), which is correct but slow:
it is meant for trying things out, not for loops.

Arrays of the dtypes kiln traces are bool, int32, int64, uint32, float16,
bfloat16 (ml_dtypes', where installed), float32 and float64 (uint32 with
int32 computes in int64, which holds both; float16 with bfloat16 in
float32).

Where results differ from numpy's (as in JAX): float functions of
integers and integer true division give float32; sums and cumsums of
int32 stay int32 and those of bools count in int32 (numpy widens both to
int64); lists of Python numbers are float32/int32 like the numbers
themselves, while numpy scalars keep their dtype; traced index arrays
clamp out-of-range entries. Where numpy would raise or warn at run time,
values decide nothing at trace time: an integer // or % by 0 gives 0,
and an integer to a negative integer power gives the integer part of its
reciprocal.
"""

# One module per family, lowest first (each imports only those above it):
# _base (dtypes, constants, as_tensor, argument helpers), _shapes,
# _creation, _reductions, _elementwise, _building, _products. Each names
# its public functions in its own __all__.
from ._base import *  # noqa: F401,F403
from ._shapes import *  # noqa: F401,F403
from ._creation import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._building import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403


# The public names, spelled out: those of the modules above, not the
# modules themselves. test_numpy.py checks the list is complete.
__all__ = [
    'Tensor', 'abs', 'absolute', 'add', 'all', 'amax', 'amin', 'any',
    'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh',
    'argmax', 'argmin', 'argsort', 'around', 'array', 'as_tensor',
    'asarray', 'astype', 'bfloat16', 'bitwise_and', 'bitwise_not',
    'bitwise_or', 'bitwise_xor', 'bool_', 'broadcast_to', 'ceil', 'clip',
    'concatenate', 'cos', 'cosh', 'cumprod', 'cumsum', 'diag', 'diagonal',
    'divide', 'dot', 'dtype_of', 'e', 'einsum', 'equal', 'exp', 'exp2',
    'expand_dims', 'expm1', 'eye', 'fail', 'flip', 'float16', 'float32',
    'float64', 'floor', 'floor_divide', 'full', 'full_like', 'greater',
    'greater_equal', 'inf', 'inner', 'int32', 'int64', 'invert', 'isfinite',
    'isinf', 'isnan', 'left_shift', 'less', 'less_equal', 'linspace', 'log',
    'log10', 'log1p', 'log2', 'logical_and', 'logical_not', 'logical_or',
    'logical_xor', 'matmul', 'max', 'maximum', 'mean', 'min', 'minimum',
    'mod', 'moveaxis', 'multiply', 'nan', 'ndarray', 'negative', 'newaxis',
    'not_equal', 'ones', 'ones_like', 'outer', 'pad', 'pi', 'positive',
    'power', 'prod', 'ravel', 'reciprocal', 'remainder', 'repeat',
    'reshape', 'right_shift', 'rint', 'round', 'sign', 'sin', 'sinh',
    'sort', 'split', 'sqrt', 'square', 'squeeze', 'stack', 'std',
    'subtract', 'sum', 'swapaxes', 'take', 'tan', 'tanh', 'tile', 'trace',
    'transpose', 'tril', 'triu', 'true_divide', 'uint32', 'var', 'vdot',
    'where', 'zeros', 'zeros_like',
]


def _report_kiln_numpy_as_module():
    """Each function reports kiln.numpy as its module (help(), pickling),
    not the file of the package that defines it, as jax.numpy's do."""
    for name in __all__:
        value = globals()[name]
        if getattr(value, "__module__", "").startswith(__name__ + "."):
            value.__module__ = __name__


_report_kiln_numpy_as_module()
