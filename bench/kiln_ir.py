"""A small writer of kiln-dialect MLIR text for the benchmark workloads.

It tracks the shape and dtype of every value so that the workloads in
workloads.py read like numpy code while producing the exact textual forms
the kiln ops take (ir/include/kiln/IR/KilnOps.td). Regions of kiln.for and
kiln.while are isolated from above, so their bodies are written by a nested
Block that only sees the block arguments it is given.
"""

DTYPES = {"f32", "f64", "i1", "i32", "i64"}


def tensor_type(shape, dtype):
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{dtype}>" if shape else f"tensor<{dtype}>"


class Value:
    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)


class Block:
    """A straight-line list of kiln ops; values are numbered per function."""

    def __init__(self, counter, indent):
        self.lines = []
        self.counter = counter
        self.indent = indent

    def _new(self, shape, dtype, text):
        self.counter[0] += 1
        value = Value(f"%v{self.counter[0]}", shape, dtype)
        self.lines.append(f"{self.indent}{value.name} = {text}")
        return value

    # Leaves.
    def constant(self, number, shape=(), dtype="f32"):
        literal = f"{float(number):.9e}" if dtype.startswith("f") else str(int(number))
        return self._new(shape, dtype,
                         f"kiln.constant dense<{literal}> : {tensor_type(shape, dtype)}")

    def iota(self, dim, shape, dtype="i32"):
        return self._new(shape, dtype,
                         f"kiln.iota dim = {dim} : {tensor_type(shape, dtype)}")

    # Elementwise.
    def unary(self, op, x):
        return self._new(x.shape, x.dtype, f"kiln.{op} {x.name} : {x.type}")

    def binary(self, op, x, y):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise ValueError(f"kiln.{op}: {x.type} vs {y.type}")
        return self._new(x.shape, x.dtype, f"kiln.{op} {x.name}, {y.name} : {x.type}")

    def add(self, x, y):
        return self.binary("add", x, y)

    def sub(self, x, y):
        return self.binary("sub", x, y)

    def mul(self, x, y):
        return self.binary("mul", x, y)

    def div(self, x, y):
        return self.binary("div", x, y)

    def scale(self, x, number):
        return self.mul(x, self.constant(number, x.shape, x.dtype))

    def compare(self, direction, x, y):
        if x.shape != y.shape:
            raise ValueError("compare shapes differ")
        return self._new(x.shape, "i1",
                         f"kiln.compare {direction}, {x.name}, {y.name} : {x.type}")

    def select(self, pred, on_true, on_false):
        return self._new(on_true.shape, on_true.dtype,
                         f"kiln.select {pred.name}, {on_true.name}, {on_false.name} : "
                         f"{pred.type}, {on_true.type}")

    def cast(self, x, dtype):
        return self._new(x.shape, dtype,
                         f"kiln.cast {x.name} : {x.type} to {tensor_type(x.shape, dtype)}")

    # Shapes.
    def broadcast(self, x, shape, dims):
        shape = tuple(shape)
        return self._new(shape, x.dtype,
                         f"kiln.broadcast_in_dim {x.name}, dims = [{', '.join(map(str, dims))}] : "
                         f"({x.type}) -> {tensor_type(shape, x.dtype)}")

    def reshape(self, x, shape):
        shape = tuple(shape)
        return self._new(shape, x.dtype,
                         f"kiln.reshape {x.name} : ({x.type}) -> {tensor_type(shape, x.dtype)}")

    def transpose(self, x, perm):
        shape = tuple(x.shape[p] for p in perm)
        return self._new(shape, x.dtype,
                         f"kiln.transpose {x.name}, permutation = [{', '.join(map(str, perm))}] : {x.type}")

    def dynamic_slice(self, x, index, size):
        shape = (size,) + x.shape[1:]
        return self._new(shape, x.dtype,
                         f"kiln.dynamic_slice {x.name}[{index.name}], size = {size} : {x.type}")

    # Reductions and contractions.
    def reduce(self, op, x, dims):
        shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
        return self._new(shape, x.dtype,
                         f"kiln.reduce_{op} {x.name}, dims = [{', '.join(map(str, dims))}] : {x.type}")

    def matmul(self, x, y):
        if x.shape[-1] != y.shape[-2] or x.shape[:-2] != y.shape[:-2]:
            raise ValueError(f"matmul {x.type} x {y.type}")
        shape = x.shape[:-1] + (y.shape[-1],)
        return self._new(shape, x.dtype,
                         f"kiln.matmul {x.name}, {y.name} : {x.type}, {y.type}")

    # Control flow.
    def _region_args(self, values):
        args = []
        for v in values:
            self.counter[0] += 1
            args.append(Value(f"%a{self.counter[0]}", v.shape, v.dtype))
        return args

    def _results(self, values, text_lines):
        self.counter[0] += 1
        base = f"%r{self.counter[0]}"
        self.lines.append(f"{self.indent}{base}:{len(values)} = " + text_lines[0])
        self.lines.extend(text_lines[1:])
        return [Value(f"{base}#{i}", v.shape, v.dtype) for i, v in enumerate(values)]

    def _body(self, args, fn, lead=()):
        inner = Block(self.counter, self.indent + "  ")
        yielded = fn(inner, *lead, *args)
        header = ", ".join(f"{a.name}: {a.type}" for a in list(lead) + list(args))
        yield_types = ", ".join(v.type for v in yielded)
        return ([f"{self.indent}^bb0({header}):"] + inner.lines +
                [f"{inner.indent}kiln.yield {', '.join(v.name for v in yielded)} : {yield_types}"],
                yielded)

    def for_loop(self, trips, inits, body):
        """body(block, i, *carried) returns the next carried values."""
        self.counter[0] += 1
        index = Value(f"%i{self.counter[0]}", (), "i64")
        args = self._region_args(inits)
        lines, _ = self._body(args, body, lead=(index,))
        types = ", ".join(v.type for v in inits)
        head = (f"kiln.for {trips} iterations ({', '.join(v.name for v in inits)}) : "
                f"({types}) {{")
        return self._results(inits, [head] + lines + [f"{self.indent}}}"])

    def while_loop(self, inits, cond, body):
        """cond(block, *carried) returns [i1 scalar]; body the next values."""
        cond_lines, _ = self._body(self._region_args(inits), cond)
        body_lines, _ = self._body(self._region_args(inits), body)
        types = ", ".join(v.type for v in inits)
        head = (f"kiln.while ({', '.join(v.name for v in inits)}) : ({types}) cond {{")
        return self._results(inits, [head] + cond_lines + [f"{self.indent}}} do {{"] +
                             body_lines + [f"{self.indent}}}"])


class Function:
    """func.func @name(args) -> results, written with a Block."""

    def __init__(self, name):
        self.name = name
        self.counter = [0]
        self.args = []
        self.block = Block(self.counter, "  ")

    def arg(self, name, shape, dtype="f32"):
        value = Value(f"%{name}", shape, dtype)
        self.args.append(value)
        return value

    def text(self, results):
        args = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        types = ", ".join(r.type for r in results)
        return "\n".join(
            [f"func.func @{self.name}({args}) -> ({types}) {{"] + self.block.lines +
            [f"  return {', '.join(r.name for r in results)} : {types}", "}", ""])
