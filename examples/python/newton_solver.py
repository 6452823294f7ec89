"""Newton's method as a kiln.while_loop, differentiated with respect to a
parameter through the loop.

What it shows:

  * kiln.while_loop with a data-dependent stopping test: Newton steps
    x <- x - f(x, p) / f'(x, p) run while |f(x, p)| > TOL (and fewer than
    MAX_ITER steps were taken). The step count is carried in the loop state
    and returned, and it differs from one p to the next.
  * f'(x, p) inside the loop body is kiln.grad(f) (a gradient inside a
    while_loop), and kiln.value_and_grad(..., has_aux=True) of the solution
    x*(p) with respect to p differentiates through the whole while_loop
    (the trip count is the aux output), all in one kiln.jit function.
  * checks, for every p: the loop stops with |f| <= TOL in fewer than
    MAX_ITER steps, and the derivative kiln computes through the loop
      - matches the derivative of the same Newton iterations (same number
        of steps) carried along in forward mode in numpy, float64, with a
        relative error below UNROLLED_RTOL = 1e-9: kiln differentiates
        the program it ran;
      - matches the implicit-function value dx*/dp = -(df/dp) / (df/dx)
        at the solution with a relative error below IMPLICIT_RTOL = 1e-7.
        The derivative of the last iterate is not exactly the implicit
        one: it is off by about |f| * f''/f'^2 at the iterate before the
        last (Newton's map has zero derivative in x only at the root), and
        TOL bounds the last residual, not that one. Here that is 1e-16 to
        1e-8 (x = cos(5 x)); for x = cos(100 x) it would be 6e-7, and the
        path from x0 there is chaotic (a change of x0 by 1e-15 changes the
        root found), so p stays at 20 or below. (Had x0 already been the root, the loop
        would run 0 times and dx/dp would be 0: the derivative of the
        program as written.)
  Absolute bounds apply where the reference value is 0.

Two equations, in float64: x^3 + p*x - 2 = 0 from x0 = 1 (one real root
for p >= 0) and x = cos(p*x) from x0 = 0.

Run (from a build tree):

    PYTHONPATH=build/python /usr/bin/python3 examples/python/newton_solver.py

Exits 1 if a solve does not converge, a derivative is off, or the trip
count is the same for every p.
"""

import sys
import time

import numpy as np

import kiln
import kiln.numpy as knp

TOL = 1e-12          # stop when |f(x, p)| <= TOL
MAX_ITER = 100
UNROLLED_RTOL = 1e-9
IMPLICIT_RTOL = 1e-7


def newton(f, p, x0):
    """The root x of f(., p) near x0, and the number of Newton steps."""
    dfdx = kiln.grad(f)                      # d/dx, traced into the body

    def keep_going(state):
        x, steps = state
        return knp.logical_and(knp.abs(f(x, p)) > TOL, steps < MAX_ITER)

    def newton_step(state):
        x, steps = state
        return x - f(x, p) / dfdx(x, p), steps + 1

    return kiln.while_loop(keep_going, newton_step, (knp.full_like(p, x0), 0))


# Each problem: f(x, p) traced by kiln, x0, the same f and its partial
# derivatives f_x, f_p, f_xx, f_xp in numpy, and the parameters to solve for.
PROBLEMS = [
    ("x^3 + p*x - 2 = 0", lambda x, p: x ** 3 + p * x - 2.0, 1.0,
     lambda x, p: x ** 3 + p * x - 2.0,
     lambda x, p: 3 * x ** 2 + p,                       # f_x
     lambda x, p: x,                                    # f_p
     lambda x, p: 6 * x,                                # f_xx
     lambda x, p: 1.0,                                  # f_xp
     [0.0, 0.1, 0.5, 2.0, 3.0, 10.0, 100.0, 1000.0]),
    ("x = cos(p*x)", lambda x, p: x - knp.cos(p * x), 0.0,
     lambda x, p: x - np.cos(p * x),
     lambda x, p: 1 + p * np.sin(p * x),
     lambda x, p: x * np.sin(p * x),
     lambda x, p: p * p * np.cos(p * x),
     lambda x, p: np.sin(p * x) + p * x * np.cos(p * x),
     [0.0, 0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0]),
]


def unrolled_derivative(f, f_x, f_p, f_xx, f_xp, p, x0, steps):
    """dx/dp of `steps` Newton steps from x0, in forward mode (numpy)."""
    x, dx = np.float64(x0), 0.0
    for _ in range(steps):
        value, slope = f(x, p), f_x(x, p)
        d_value = f_x(x, p) * dx + f_p(x, p)
        d_slope = f_xx(x, p) * dx + f_xp(x, p)
        x, dx = (x - value / slope,
                 dx - (d_value * slope - value * d_slope) / slope ** 2)
    return dx


def close(got, want, rtol, atol):
    """(relative error, within bounds): absolute where want is 0."""
    error = abs(got - want)
    if want == 0:
        return error, error <= atol
    return error / abs(want), error <= rtol * abs(want)


def main():
    ok = True
    for title, f, x0, f_np, f_x, f_p, f_xx, f_xp, ps in PROBLEMS:
        # One compiled function: p -> ((x*, steps), dx*/dp).
        solve = kiln.jit(kiln.value_and_grad(lambda p: newton(f, p, x0),
                                             has_aux=True),
                         name="newton")
        print(f"{title}, x0 = {x0}:")
        print(f"  {'p':>6} {'x*':>18} {'steps':>5} {'|f(x*)|':>8} "
              f"{'dx*/dp (kiln)':>22} {'err unrolled':>12} "
              f"{'implicit':>22} {'err impl':>8}")
        trips = []
        for p in ps:
            # p as a numpy float64 (a Python float would be traced as
            # float32).
            start = time.perf_counter()
            (x, steps), dxdp = solve(np.float64(p))
            seconds = time.perf_counter() - start
            x, steps, dxdp = float(x), int(steps), float(dxdp)
            residual = abs(f_np(x, p))
            unrolled = unrolled_derivative(f_np, f_x, f_p, f_xx, f_xp, p, x0,
                                           steps)
            implicit = -f_p(x, p) / f_x(x, p)
            err_unrolled, good_unrolled = close(dxdp, unrolled,
                                                UNROLLED_RTOL, 1e-15)
            err_implicit, good_implicit = close(dxdp, implicit,
                                                IMPLICIT_RTOL, 1e-12)
            good = (steps < MAX_ITER and residual <= TOL and good_unrolled
                    and good_implicit)
            ok = ok and good
            trips.append(steps)
            print(f"  {p:6g} {x:18.15f} {steps:5d} {residual:8.1e} "
                  f"{dxdp:22.15e} {err_unrolled:12.1e} {implicit:22.15e} "
                  f"{err_implicit:8.1e}  {'ok' if good else 'FAIL'}  "
                  f"({1e6 * seconds:.0f} us)")
        print(f"  trip counts {trips}; compile {solve.last_compile_seconds:.2f}"
              " s (the first call's time includes it)")
        if len(set(trips)) < 2:
            print("  FAIL: the trip count did not vary with p",
                  file=sys.stderr)
            ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
