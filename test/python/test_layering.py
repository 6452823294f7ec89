"""The kiln package is layered one way, as JAX's is: primitives, then
control flow, then kiln.numpy, then the public API. A module imports, at
module level, only modules of the layers below it; imports inside
functions (which hid the cycles this order removes) stay out; and
kiln.numpy keeps every name it exports.

The import checks read the sources (compiler/bindings/python/kiln) with
`ast`, so they run without the built extension; each checks itself on an
input that must fail."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "compiler" / "bindings" / "python" / "kiln"

# The modules, lowest layer first (dotted names under kiln; "" is kiln's
# own __init__). A module may import, at module level, only modules listed
# before it. A new module takes its place here.
LAYERS = [
    ("extension", ["_kiln"]),
    ("pytrees", ["_tree"]),
    ("core: Tensor, dtypes, errors", ["_core"]),
    ("runtime-side primitives", ["profiler", "runtime", "distributed",
                                 "_device"]),
    ("tracing and compilation", ["_jit"]),
    ("elastic training over kiln.jit", ["distributed.elastic"]),
    ("eager dispatch", ["_eager"]),
    ("control flow", ["_control"]),
    ("kiln.numpy", ["numpy._base", "numpy._shapes", "numpy._creation",
                    "numpy._reductions", "numpy._elementwise",
                    "numpy._building", "numpy._products", "numpy"]),
    ("Tensor's numpy methods", ["_indexing", "_tensor"]),
    ("transforms", ["_grad", "_vmap"]),
    ("libraries", ["lax", "ops", "random", "nn", "optim", "feature_column"]),
    ("public API", [""]),
]
ORDER = [module for _, modules in LAYERS for module in modules]

# Imports of package modules inside functions: none (each was a cycle that
# the layering removed; before it there were 35).
MAX_FUNCTION_LOCAL_IMPORTS = 0

# The modules that may call kiln.jit themselves: kiln._eager is the one
# eager dispatch; kiln.vjp's pullback is a compiled function wherever it is
# called; kiln's __init__ exports jit; kiln.distributed.elastic.jit makes
# one kiln.jit per size of the run.
JIT_IMPORTERS = {"_eager", "_grad", "", "distributed.elastic"}

# kiln.numpy.__all__ before the package was split into modules.
NUMPY_EXPORTS = [
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


def sources():
    """{module: source text} of every .py file of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path.read_text()
    return found


def _is_package(module, known):
    return module == "" or any(m.startswith(module + ".") for m in known)


def imports(module, text, known):
    """[(imported package module, line, inside a function)] of a module's
    source: relative imports and absolute ones of kiln, each name of
    `from X import a` counted as X.a where that is a module, and the
    packages above an imported module (importing kiln.numpy._base runs
    kiln.numpy) unless they hold the importer."""
    found = []
    package = module if _is_package(module, known) else \
        module.rpartition(".")[0]

    def resolve(name):
        return name if name in known else None

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "kiln" or \
                            alias.name.startswith("kiln."):
                        found.append((alias.name[5:], child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".") if package else []
                    base = base[:len(base) - (child.level - 1)]
                    if child.module:
                        base += child.module.split(".")
                    target = ".".join(base)
                elif child.module == "kiln" or (
                        child.module or "").startswith("kiln."):
                    target = child.module[5:]
                else:
                    continue
                named = [resolve(f"{target}.{a.name}".lstrip("."))
                         for a in child.names]
                if target != "" and not all(named):
                    found.append((target, child.lineno, inner))
                found.extend((n, child.lineno, inner) for n in named if n)
            visit(child, inner)

    visit(ast.parse(text), False)
    with_packages = []
    for target, line, inner in found:
        with_packages.append((target, line, inner))
        parts = target.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if not (module + ".").startswith(parent + "."):
                with_packages.append((parent, line, inner))
    return with_packages


def layering_violations(texts, order):
    """'module:line imports higher' for each module-level import of a
    module that is not listed before the importer."""
    known = set(order)
    problems = []
    for module, text in texts.items():
        for target, line, inner in imports(module, text, known):
            if inner or target == module:
                continue
            if target not in known:
                problems.append(f"{module or 'kiln'}:{line} imports "
                                f"{target}, which LAYERS does not list")
            elif order.index(target) > order.index(module):
                problems.append(f"{module or 'kiln'}:{line} imports "
                                f"{target or 'kiln'}, a higher layer")
    return problems


def function_local_imports(texts, known):
    return [f"{module or 'kiln'}:{line} imports {target or 'kiln'}"
            for module, text in texts.items()
            for target, line, inner in imports(module, text, known) if inner]


def test_every_module_has_a_layer():
    assert sorted(sources()) == sorted(m for m in ORDER if m != "_kiln")


def test_modules_import_only_lower_layers():
    assert layering_violations(sources(), ORDER) == []


def test_the_layering_check_catches_an_upward_import():
    texts = dict(sources())
    texts["_core"] += "\nfrom . import numpy as knp\n"
    texts["numpy._shapes"] += "\nfrom .._grad import grad\n"
    texts["_control"] += "\nfrom .numpy._base import _float_of\n"

    def last_line(module):
        return texts[module].count("\n")
    assert sorted(layering_violations(texts, ORDER)) == sorted([
        f"_core:{last_line('_core')} imports numpy, a higher layer",
        f"_control:{last_line('_control')} imports numpy._base, a higher "
        "layer",
        f"_control:{last_line('_control')} imports numpy, a higher layer",
        f"numpy._shapes:{last_line('numpy._shapes')} imports _grad, a "
        "higher layer",
    ])


def test_function_local_imports_stay_out():
    local = function_local_imports(sources(), set(ORDER))
    assert len(local) <= MAX_FUNCTION_LOCAL_IMPORTS, local


def test_the_local_import_count_sees_one():
    texts = dict(sources())
    texts["_grad"] += ("\ndef later():\n"
                       "    from . import numpy as knp\n"
                       "    return knp\n")
    assert function_local_imports(texts, set(ORDER)) == [
        f"_grad:{texts['_grad'].count(chr(10)) - 1} imports numpy"]


def test_eager_dispatch_is_written_once():
    """Running traced code on concrete arrays goes through kiln._eager:
    only the modules in JIT_IMPORTERS take kiln.jit themselves."""
    known = set(ORDER)
    importers = {module for module, text in sources().items()
                 for target, _, _ in imports(module, text, known)
                 if target == "_jit"}
    assert importers == JIT_IMPORTERS


def _dunder_all(text):
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) == "__all__" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def test_numpy_modules_export_explicitly_and_once():
    """Each kiln.numpy module names its public functions in __all__; no
    name comes from two of them, and together they are kiln.numpy's."""
    texts = sources()
    exported = []
    for module in ORDER:
        if module.startswith("numpy."):
            names = _dunder_all(texts[module])
            assert names is not None, f"kiln.{module} has no __all__"
            exported += names
    assert len(exported) == len(set(exported))
    assert sorted(exported) == sorted(_dunder_all(texts["numpy"]))


def test_numpy_keeps_its_exports():
    knp = pytest.importorskip("kiln.numpy")
    assert set(NUMPY_EXPORTS) <= set(knp.__all__)
    for name in NUMPY_EXPORTS:
        assert hasattr(knp, name), name
        value = getattr(knp, name)
        if callable(value) and getattr(value, "__module__", "").startswith(
                "kiln.numpy"):
            assert value.__module__ == "kiln.numpy", name
