"""Shared fixtures of kiln's pytest suites.

Run by ctest (PYTHONPATH=build/python), or by hand:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest test/python
"""

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded by the test's name: reproducible, and different
    for every test."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(request.node.name))
    return np.random.default_rng(seed)


def finite_difference(f, args, argnum=0, eps=1e-6):
    """d f(*args) / d args[argnum] by central differences in float64
    (f returns a scalar)."""
    args = [np.asarray(a, np.float64) for a in args]
    x = args[argnum]
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[argnum][index] += eps
        minus[argnum][index] -= eps
        grad[index] = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
    return grad


class Exported:
    """Another library's array as the DLPack protocol shows it: only
    __dlpack__ and __dlpack_device__ (numpy's, here, on host memory)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
