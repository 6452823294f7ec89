"""kiln from Python in a dozen lines: a square root by Newton's method (a
loop whose trip count depends on the data), compiled with kiln.jit, and its
derivative taken in reverse mode through that loop with kiln.grad.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/quickstart.py
"""

import sys

import numpy as np

import kiln
import kiln.numpy as knp


def newton_sqrt(x):
    def step(state):
        guess, count = state
        return 0.5 * (guess + x / guess), count + 1

    def far(state):
        guess, _ = state
        return knp.max(knp.abs(guess * guess - x) / x) > 1e-6
    return kiln.while_loop(far, step, (x, 0))


roots = kiln.jit(newton_sqrt)
x = np.array([2.0, 9.0, 10.0, 1e6], np.float32)
root, iterations = roots(x)
print("roots:", root, "after", int(iterations), "iterations")

# d/dx of sum(sqrt(x)) through the while loop: 1 / (2 sqrt(x)).
d_root = kiln.jit(kiln.grad(lambda x: knp.sum(newton_sqrt(x)[0])))
gradient = d_root(x)
print("d sqrt(x)/dx:", gradient, "(exact:", 0.5 / np.sqrt(x), ")")

ok = np.allclose(root, np.sqrt(x), rtol=1e-5) and \
    np.allclose(gradient, 0.5 / np.sqrt(x), rtol=1e-3)
sys.exit(0 if ok else 1)
