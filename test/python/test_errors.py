"""Errors name the problem, the fix where there is one, and the user's
Python file and line."""

import re

import numpy as np
import pytest

import kiln
import kiln.numpy as knp

HERE = re.escape(__file__)


def line_of(marker):
    """The line number of the source line of this file containing marker."""
    with open(__file__) as source:
        for number, line in enumerate(source, 1):
            if marker in line and "line_of(" not in line and \
                    "raises_at(" not in line:
                return number
    raise AssertionError(marker)


def raises_at(error, marker, *patterns):
    """pytest.raises for `error` whose message starts with this file's
    line holding `marker` and contains every pattern."""
    class Check:
        def __enter__(self):
            self.context = pytest.raises(error)
            self.info = self.context.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.context.__exit__(*exc)
            message = str(self.info.value)
            assert message.startswith(f"{__file__}:{line_of(marker)}: "), \
                message
            for pattern in patterns:
                assert re.search(pattern, message), (pattern, message)
            return handled
    return Check()


X = np.ones((2, 3), np.float32)


def test_shape_mismatch_points_at_the_line():
    def f(x):
        y = knp.ones((4, 5))
        return x + y  # <- shape mismatch
    with raises_at(kiln.TraceError, "<- shape mismatch",
                   r"cannot broadcast shapes \[2,3\] and \[4,5\]"):
        kiln.jit(f)(X)


def test_python_if_on_a_traced_value_names_cond():
    def f(x):
        if knp.sum(x) > 0:  # <- python if
            return x
        return -x
    with raises_at(kiln.ConcretizationError, "<- python if",
                   "truth value of a traced array", r"kiln\.cond",
                   r"kiln\.numpy\.where"):
        kiln.jit(f)(X)


def test_data_dependent_python_loop_names_while_loop():
    def f(x):
        while knp.max(x) < 10.0:  # <- python while
            x = x * 2.0
        return x
    with raises_at(kiln.ConcretizationError, "<- python while",
                   r"kiln\.while_loop"):
        kiln.jit(f)(X)


def test_fixed_count_python_loops_unroll():
    def f(x):
        for _ in range(2000):
            x = x + 1.0
        return x
    np.testing.assert_allclose(kiln.jit(f)(X), X + 2000)


def test_float_and_int_of_a_traced_value():
    def to_float(x):
        return float(knp.sum(x))  # <- float()
    with raises_at(kiln.ConcretizationError, "<- float()", r"float\(\)"):
        kiln.jit(to_float)(X)

    def to_range(x, n):
        total = x
        for _ in range(n):  # <- range of traced
            total = total + x
        return total
    with raises_at(kiln.ConcretizationError, "<- range of traced",
                   r"kiln\.fori_loop"):
        kiln.jit(to_range)(X, 3)
    with raises_at(TypeError, "<- numpy on traced"):
        kiln.jit(lambda x: np.sin(x))(X)  # <- numpy on traced


def test_dtype_that_cannot_be_traced():
    with raises_at(TypeError, "<- int8 input", "int8",
                   "does not trace"):
        kiln.jit(lambda x: x)(X.astype(np.int8))  # <- int8 input


def test_dtype_none_is_refused_not_read_as_float64():
    with raises_at(TypeError, "<- astype None", "dtype None", "float64"):
        kiln.jit(lambda x: x.astype(None))(X)  # <- astype None
    with raises_at(TypeError, "<- eye None", "dtype None"):
        kiln.jit(lambda x: x + knp.eye(2, 3, dtype=None))(X)  # <- eye None


def test_a_dtype_this_python_lacks_names_its_package():
    """bfloat16 without ml_dtypes is a dtype that fails at every use (where
    it was None, `astype` gave float64 and `zeros` float32, silently)."""
    from kiln import _core
    missing = _core.MissingDtype("bfloat16", "ml_dtypes")
    assert "ml_dtypes" in repr(missing)
    bf16 = knp.bfloat16
    if not isinstance(bf16, _core.MissingDtype):
        assert np.dtype(bf16).name == "bfloat16"  # ml_dtypes is installed
    for dtype in (missing, bf16) if bf16 is not None else (missing,):
        if not isinstance(dtype, _core.MissingDtype):
            continue
        with raises_at(TypeError, "<- astype missing", "bfloat16",
                       "pip install ml_dtypes"):
            kiln.jit(lambda x: x.astype(dtype))(X)  # <- astype missing
        with raises_at(TypeError, "<- zeros missing", "ml_dtypes"):
            kiln.jit(lambda x: x + knp.zeros((2, 3), dtype))(X)  # <- zeros missing
        with raises_at(TypeError, "<- arange missing", "ml_dtypes"):
            kiln.jit(lambda x: x + knp.arange(3, dtype=dtype))(X)  # <- arange missing
        with raises_at(TypeError, "<- scalar missing", "ml_dtypes"):
            dtype(1.0)  # <- scalar missing


def test_non_array_argument_suggests_static_argnums():
    with raises_at(TypeError, "<- string argument", "static_argnums"):
        kiln.jit(lambda x, mode: x)(X, "fast")  # <- string argument


def test_matmul_contraction_mismatch():
    with raises_at(kiln.TraceError, "<- bad matmul", "matmul"):
        kiln.jit(lambda x: x @ knp.ones((2, 2)))(X)  # <- bad matmul


def test_wrong_input_shape_to_a_compiled_function():
    compiled = kiln.jit(lambda x: x * 2.0).compile(X)
    with pytest.raises(ValueError, match=r"input 0 \('arg0'\) has shape "
                       r"\[3,2\] but the signature expects \[2,3\]"):
        compiled(X.T.copy())
    with pytest.raises(ValueError, match="has dtype float64 but f32"):
        compiled(X.astype(np.float64))


def test_errors_inside_control_flow_point_at_the_body():
    def f(x):
        def body(i, c):
            return c @ knp.ones((5, 5))  # <- in a loop body
        return kiln.fori_loop(0, 3, body, x)
    with raises_at(kiln.TraceError, "<- in a loop body", "matmul"):
        kiln.jit(f)(X)


def test_a_failed_trace_leaves_the_function_usable():
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("user error")
        return x + 1.0
    jitted = kiln.jit(f)
    with pytest.raises(RuntimeError, match="user error"):
        jitted(X)
    np.testing.assert_allclose(jitted(X), X + 1)


def test_tensors_do_not_escape_their_trace():
    leaked = []

    def f(x):
        leaked.append(x)
        return x
    kiln.jit(f)(X)
    with pytest.raises(kiln.TraceError):
        kiln.jit(lambda y: y + leaked[0])(X)


def test_a_number_that_does_not_fit_the_dtype():
    with raises_at(kiln.TraceError, "<- too big for int32",
                   "1099511627776", "i32", r"x\.astype\(numpy\.int64\)"):
        kiln.jit(lambda x: x + 2**40)(np.ones(2, np.int32))  # <- too big for int32


def test_bool_arithmetic_needs_a_cast():
    with raises_at(kiln.TraceError, "<- negating bools", "bool|i1",
                   r"x\.astype\(numpy\.int32\)"):
        kiln.jit(lambda m: -m)(np.array([True, False]))  # <- negating bools
