"""The Python face of a traced array (kiln.Tensor): numpy's operators,
methods and indexing, and the errors for using a traced value as a
concrete one."""

from . import _core
from . import numpy as knp
from ._core import Tensor, ConcretizationError, fail
from ._indexing import getitem, AtIndexer


def _concretization(what, hint):
    def raise_error(self, *args):
        fail(f"{what} of a traced array: its value is not known while "
             f"tracing. {hint}", ConcretizationError)
    return raise_error


_BRANCH_HINT = ("A Python `if` or `while` on a traced value cannot be "
                "recorded: use kiln.cond(pred, true_fn, false_fn, *operands) "
                "for a branch, kiln.numpy.where for an elementwise choice, "
                "or kiln.while_loop(cond_fn, body_fn, init) for a loop that "
                "runs until a traced condition fails (Python loops with a "
                "fixed count are fine: they unroll).")
_VALUE_HINT = ("Keep the computation in kiln.numpy operations, or return "
               "the array from the jitted function and convert it there.")
_INDEX_HINT = ("Use kiln.fori_loop(lo, hi, body, init) or kiln.while_loop "
               "for a loop whose trip count is a traced value; index with "
               "a traced integer directly (x[i]) for a dynamic element.")

Tensor.__bool__ = _concretization("The truth value", _BRANCH_HINT)
Tensor.__float__ = _concretization("float()", _VALUE_HINT)
Tensor.__complex__ = _concretization("complex()", _VALUE_HINT)
Tensor.__int__ = _concretization("int()", _VALUE_HINT)
Tensor.__index__ = _concretization("Using as a Python integer", _INDEX_HINT)
Tensor.item = _concretization(".item()", _VALUE_HINT)
Tensor.tolist = _concretization(".tolist()", _VALUE_HINT)
Tensor.__array__ = _concretization("Converting to a numpy array",
                                   "numpy functions cannot run on traced "
                                   "arrays: use kiln.numpy (import "
                                   "kiln.numpy as knp) inside traced code.")


def _reflected(fn):
    return lambda self, other: fn(other, self)


_BINARY = {
    "add": knp.add, "sub": knp.subtract, "mul": knp.multiply,
    "truediv": knp.true_divide, "floordiv": knp.floor_divide,
    "mod": knp.remainder, "pow": knp.power, "matmul": knp.matmul,
    "and": knp.bitwise_and, "or": knp.bitwise_or, "xor": knp.bitwise_xor,
    "lshift": knp.left_shift, "rshift": knp.right_shift,
}
for _name, _fn in _BINARY.items():
    setattr(Tensor, f"__{_name}__", _fn)
    setattr(Tensor, f"__r{_name}__", _reflected(_fn))

Tensor.__eq__ = knp.equal
Tensor.__ne__ = knp.not_equal
Tensor.__lt__ = knp.less
Tensor.__le__ = knp.less_equal
Tensor.__gt__ = knp.greater
Tensor.__ge__ = knp.greater_equal
Tensor.__neg__ = knp.negative
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = knp.abs
Tensor.__invert__ = knp.invert
Tensor.__hash__ = object.__hash__
# A numpy array or scalar on the left of an operator (c + x) defers to
# Tensor's reflected operator instead of converting x with __array__
# (numpy's binop override: a higher priority and no __array_ufunc__).
Tensor.__array_priority__ = 1000
Tensor.__getitem__ = getitem
Tensor.at = property(lambda self: AtIndexer(self))


def _len(self):
    if self.ndim == 0:
        fail("len() of a rank-0 traced array", TypeError)
    return self.shape[0]


def _iter(self):
    if self.ndim == 0:
        fail("iteration over a rank-0 traced array", TypeError)
    return (self[i] for i in range(self.shape[0]))


Tensor.__len__ = _len
Tensor.__iter__ = _iter
Tensor.dtype = property(_core.dtype_of)
Tensor.T = property(lambda self: knp.transpose(self))
Tensor.__repr__ = lambda self: (f"kiln.Tensor(shape={self.shape}, "
                                f"dtype={_core.dtype_of(self)})")

Tensor.astype = lambda self, dtype: knp.astype(self, dtype)
Tensor.reshape = lambda self, *shape: knp.reshape(
    self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int)
    else shape)
Tensor.transpose = lambda self, *axes: knp.transpose(
    self, (axes[0] if len(axes) == 1 and not isinstance(axes[0], int)
           else axes) or None)
Tensor.swapaxes = knp.swapaxes
Tensor.squeeze = knp.squeeze
Tensor.flatten = knp.ravel
Tensor.ravel = knp.ravel
Tensor.sum = knp.sum
Tensor.mean = knp.mean
Tensor.max = knp.max
Tensor.min = knp.min
Tensor.argmax = knp.argmax
Tensor.argmin = knp.argmin
Tensor.var = knp.var
Tensor.std = knp.std
Tensor.any = knp.any
Tensor.all = knp.all
Tensor.cumsum = knp.cumsum
Tensor.clip = knp.clip
Tensor.dot = knp.dot
Tensor.round = knp.round
Tensor.__round__ = lambda self, ndigits=None: knp.round(self, ndigits or 0)
Tensor.take = knp.take
Tensor.__divmod__ = lambda self, other: (knp.floor_divide(self, other),
                                         knp.remainder(self, other))
Tensor.__rdivmod__ = lambda self, other: (knp.floor_divide(other, self),
                                          knp.remainder(other, self))
