"""kiln.jit: trace on the first call per input signature, compile, cache.

A signature is the structure of the arguments (pytrees), the value of each
static argument, and the dtype and shape of every array leaf. On a miss the
function is traced by the C++ tracer into one kiln function, compiled by
the same driver as kiln-compile, and loaded through the runtime. Calls
without keywords or static arguments then go through the C++ Dispatcher:
it matches the arguments (pytrees included) against the compiled
signatures and calls the code without returning to Python.

Python numbers as arguments are traced as rank-0 arrays: float as float32,
int as int32 (int64 when it does not fit), bool as bool. numpy arrays that
are C-contiguous and aligned are read in place (no copy); results are numpy
arrays over the buffers the compiled code wrote.
"""

import functools
import re
import time
import warnings

import numpy as np

from . import _core, _device, _kiln, _tree
from ._core import Tensor, fail
from .distributed import P, Sharded

_MISS = object()


def _type_name(value):
    """The type of `value` as its module spells it (torch.Tensor, not
    Tensor, which would read as kiln.Tensor); builtins by their names."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def _leaf_spec(leaf, where, device="cpu"):
    """(dtype code, shape) of a jit argument leaf for a function that runs
    on `device`."""
    if device == "cuda":
        signature = _device.gpu_leaf_signature(leaf, where)
        if signature is not None:
            return _core.dtype_code(signature[0]), signature[1]
    elif not isinstance(leaf, np.ndarray) and hasattr(leaf, "__dlpack__"):
        fail(f"kiln.jit: {where} is a {_type_name(leaf)}, an array of "
             f"another library or on a GPU; a function jitted for the CPU "
             f"takes numpy arrays (np.asarray(...)), one jitted with "
             f"device='cuda' takes this one", TypeError)
    # numpy scalars first: np.float64 subclasses float but is strongly typed.
    if isinstance(leaf, (np.ndarray, np.generic)):
        dtype = leaf.dtype
        if not dtype.isnative:
            dtype = dtype.newbyteorder("=")
        if dtype not in _core.TRACED_DTYPES:
            names = ", ".join(str(d) for d in _core.TRACED_DTYPES)
            fail(f"kiln.jit: {where} has dtype {dtype}, which kiln does not "
                 f"trace ({names}); convert it with .astype", TypeError)
        return _core.dtype_code(dtype), tuple(int(d) for d in leaf.shape)
    if isinstance(leaf, bool):
        return _core.dtype_code(np.bool_), ()
    if isinstance(leaf, int):
        return _core.dtype_code(_core.int_dtype(leaf)), ()
    if isinstance(leaf, float):
        return _core.dtype_code(np.float32), ()
    fail(f"kiln.jit: {where} is a {_type_name(leaf)}, not an array or a "
         "number; pass it with static_argnums if it configures the "
         "function", TypeError)


def _block_spec(leaf, comm, where):
    """The spec of a Sharded leaf: its dtype, its whole shape, and a mark
    that it arrives as a block."""
    if comm is None:
        fail(f"kiln.jit: {where} is a kiln.distributed.Sharded block; a "
             f"function that takes blocks needs comm= and zero=", TypeError)
    code, _ = _leaf_spec(leaf.block, where)
    return code, tuple(leaf.shape), True


def _symbol(name):
    name = re.sub(r"\W", "_", (name or "fn").strip("<>"))
    return name if name[0].isalpha() else "fn_" + name


class _Entry:
    __slots__ = ("compiled", "out_def", "trace_seconds", "dispatched", "comm",
                 "blocks", "cuda")

    def __init__(self, compiled, out_def, trace_seconds, comm=None,
                 blocks=None, cuda=False):
        self.compiled, self.out_def = compiled, out_def
        # A CUDA function's calls go through kiln_runtime, which keeps its
        # results on the device.
        self.cuda = _device.CudaFunction(compiled) if cuda else None
        # The communicator the compiled code calls through, kept alive as
        # long as the code can be called.
        self.comm = comm
        # ZeRO: [(output leaf index, whole shape)] returned as blocks; None
        # without ZeRO.
        self.blocks = blocks
        self.trace_seconds = trace_seconds
        # Whether the jit's dispatcher serves this signature already.
        self.dispatched = False

    def call(self, leaves):
        """The outputs, structured, of the compiled code on `leaves`; with
        ZeRO, Sharded leaves go in as their blocks and the sharded results
        come out as Sharded."""
        if self.cuda is not None:
            return self.out_def.unflatten(self.cuda.call(leaves))
        if self.blocks is None:
            return self.out_def.unflatten(self.compiled.call(leaves))
        outputs = list(self.compiled.call(
            [leaf.block if isinstance(leaf, Sharded) else leaf
             for leaf in leaves]))
        for i, shape in self.blocks:
            outputs[i] = Sharded(outputs[i], shape)
        return self.out_def.unflatten(outputs)


class Lowered:
    """A function traced for one signature: its kiln IR."""

    def __init__(self, traced, out_def, seconds, jitted, key):
        self._lowered = (traced, out_def, seconds)
        self._jitted, self._key = jitted, key

    def as_text(self, with_locations=False):
        """The kiln IR as MLIR text; with_locations adds each op's Python
        file:line."""
        return self._lowered[0].text(with_locations)

    def __str__(self):
        return self.as_text()

    def compile(self):
        return Compiled(self._jitted._entry(self._key, self._lowered),
                        self._key[0])

    def spmd_text(self):
        """The kiln IR of the program one rank runs, for a function jitted
        with comm= (data parallelism, ZeRO or a mesh): the traced function
        after the rewrite, before compilation. Its collectives are what a
        call communicates."""
        if self._jitted._comm is None:
            fail("kiln.jit: spmd_text is the program of one rank of a "
                 "function jitted with comm=", TypeError)
        traced, out_def, _ = self._lowered
        return _kiln.compile(traced, self._jitted._opt_level, spmd_text=True,
                             donate=self._jitted._donated_leaves(self._key),
                             **self._jitted._parallel_options(
                                 self._key, traced, out_def))


class Compiled:
    """A function compiled for one signature. Call it with arguments of
    that signature, or save it for the runtime alone (kiln_runtime)."""

    def __init__(self, entry, in_def):
        self._entry, self._in_def = entry, in_def
        self._dispatch = _kiln.Dispatcher(_MISS)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            result = self._dispatch(*args)
            if result is not _MISS:
                return result
        leaves, treedef = _tree.flatten((args, kwargs))
        if treedef != self._in_def:
            fail(f"the compiled function takes arguments structured as "
                 f"{self._in_def!r}, not {treedef!r}", TypeError)
        result = self._entry.call(leaves)
        if (not kwargs and not len(self._dispatch)
                and self._entry.blocks is None and self._entry.cuda is None):
            # Later calls with arguments like these take the fast path (which
            # does not know ZeRO's blocks, nor calls that stay on a GPU).
            self._dispatch.add(treedef.children[0], leaves,
                               self._entry.compiled, self._entry.out_def)
        return result

    def save(self, path):
        """Writes the .kmod; kiln_runtime.load(path)[name] calls it."""
        self._entry.compiled.save(str(path))

    @property
    def name(self):
        return self._entry.compiled.name

    @property
    def compile_seconds(self):
        return self._entry.compiled.compile_seconds

    @property
    def from_cache(self):
        """Whether the module was read from $KILN_CACHE_DIR (compiled by an
        earlier process) instead of compiled."""
        return self._entry.compiled.from_cache

    @property
    def warnings(self):
        """The compiler's warnings for this signature, as text (none when
        the module came from $KILN_CACHE_DIR)."""
        return list(self._entry.compiled.warnings)

    @property
    def trace_seconds(self):
        return self._entry.trace_seconds


class jit:
    """Wraps `fun` for compilation: traced and compiled on the first call
    for each signature, then served from a cache.

    static_argnums: positions of arguments that are not arrays (sizes,
    flags, callables); their values are part of the signature and must be
    hashable. opt_level: LLVM's optimization level (0 to 3).

    Mixed precision, as torch.autocast does it: autocast="bf16" (or "f16")
    runs the f32 matrix products and convolutions, forward and backward,
    with operands in that type and f32 accumulation (kiln-autocast);
    inputs, outputs, parameters and everything else stay f32.

    donate_argnums, as JAX's: positions of arguments whose buffers the
    caller gives up. Each array leaf of those arguments is written with the
    first output leaf of its dtype and shape (on this rank) that no earlier
    one took, in place where the program allows, instead of a new array:
    a training step `params = step(params, batch)` then updates its
    parameters where they are rather than copying every table into a new
    array. The returned array views the donated one's memory, and the
    donated array holds the new value after the call; do not read it as the
    old value. A leaf no output matches is left alone (with a warning).
    Honoured on the CPU; on a GPU every output gets its own buffer (with a
    warning).

    device="cuda" compiles for the CUDA GPU (cuda_arch, "sm_XX": that
    architecture; by default the device's, sm_80 on a machine without
    one, where .compile(...).save(path) still works). f32 stays f32 there
    unless asked otherwise, as kiln-compile's flags of the same names do:
    cuda_tf32=True lets cuBLASLt and cuDNN round the inputs of f32 matrix
    products and convolutions to TF32 (as torch.backends.cuda.matmul.
    allow_tf32); cuda_attention_3xtf32=True runs f32 attention and its
    gradient on tensor cores in 3xTF32 products (f32's accuracy, as
    PyTorch's f32 SDPA computes); cuda_cudnn_attention=False keeps f16 and
    bf16 attention and its gradient off cuDNN's fused attention, which
    otherwise takes them where it can; and cuda_deterministic=True sums
    every result of kiln's own kernels in one order on every run (the
    attention gradient as two kernels without atomics). By default an f32
    attention that both the f32 and the 3xTF32 kernels take is a tuned
    call site carrying both, of which the runtime keeps the faster, timed
    at the first call, and so is a half-precision one that both kiln's
    tensor-core kernels and cuDNN take; cuda_attention_tuning=False builds
    the f32 kernels (in f16 and bf16 cuDNN's) alone. The attention options take sm_80 and
    later. Its calls take numpy
    arrays and numbers (copied to the device), kiln_runtime.DeviceArrays
    and other libraries' GPU arrays (anything with __dlpack__: PyTorch,
    JAX, CuPy), read in place, and return kiln_runtime.DeviceArrays, which
    stay on the device for the next call; np.asarray() copies one to the
    host, torch.from_dlpack() and jax.dlpack.from_dlpack() take it without
    a copy. Such a function runs in one process (no comm=) and is not
    profiled.

    profile=True compiles the function with its regions timed (each fused
    loop nest, oneDNN call and loop, as kiln-compile --profile does); they
    are collected while kiln.profiler is on (kiln.profiler.profile()).

    Data parallelism, as PyTorch's DDP does it: with comm (from
    kiln.distributed.mpi(), in a program started by mpirun -n N) and
    batch_argnums, every array of those arguments is this rank's block of
    a batch (rows along the leading dimension). The function is written and
    traced as for one process on the whole batch (N blocks), and rewritten
    by kiln-data-parallel into the program each rank runs: the gradients
    are summed over the ranks by bucketed all-reduces (bucket_mb, as DDP's
    bucket_cap_mb) started as the backward pass completes them (overlap),
    and every rank returns what the function returns on the whole batch.
    zero (1, 2, 3) adds ZeRO: arguments passed as kiln.distributed.Sharded
    blocks (kiln.distributed.shard) are held sharded, and the arrays of
    rank >= 1 of the outputs in shard_outnums come back as blocks.

    Tensor parallelism, as GSPMD and Megatron-LM do it: mesh (a dict of
    axis sizes, {"dp": 2, "tp": 2}, laid out row-major over comm's ranks)
    and in_shardings / out_shardings (one entry per positional argument /
    the outputs' structure: a kiln.distributed.P, None for whole, or a
    container of those matching the argument's pytree) say how arrays are
    split. Each call passes this rank's block of every split argument
    (kiln.distributed.mesh_block cuts it) and gets its block of every split
    output; the function is written and traced for whole arrays and
    partitioned by kiln-partition, which inserts the collectives.
    bucket_axis (the mesh's first axis) buckets that axis's gradient
    all-reduces as DDP does.
    """

    def __init__(self, fun, static_argnums=(), name=None, opt_level=2, *,
                 comm=None, batch_argnums=(), bucket_mb=25.0, overlap=True,
                 zero=0, shard_outnums=(), autocast=None, mesh=None,
                 in_shardings=(), out_shardings=None, bucket_axis=None,
                 profile=False, donate_argnums=(), device=None,
                 cuda_arch=None, cuda_tf32=False, cuda_deterministic=False,
                 cuda_attention_3xtf32=False, cuda_cudnn_attention=True,
                 cuda_attention_tuning=True):
        if not callable(fun):
            raise TypeError(f"kiln.jit needs a callable, not "
                            f"{type(fun).__name__}")
        self._device = _device.check_device(device, cuda_arch)
        self._cuda_arch = cuda_arch or ""
        self._cuda_flags = _device.check_cuda_flags(self._device, {
            "cuda_tf32": cuda_tf32, "cuda_deterministic": cuda_deterministic,
            "cuda_attention_3xtf32": cuda_attention_3xtf32,
            "cuda_cudnn_attention": cuda_cudnn_attention,
            "cuda_attention_tuning": cuda_attention_tuning})
        if self._device == "cuda" and comm is not None:
            fail("kiln.jit: a function jitted with device='cuda' runs in one "
                 "process; comm= (ranks over MPI or Gloo) needs "
                 "device='cpu'", TypeError)
        if self._device == "cuda" and profile:
            fail("kiln.jit: profile=True times the CPU's code; it is not "
                 "supported with device='cuda'", TypeError)
        self._fun = fun
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        self._static = tuple(sorted(static_argnums))
        if isinstance(batch_argnums, int):
            batch_argnums = (batch_argnums,)
        self._batch = tuple(sorted(batch_argnums))
        if comm is not None and not isinstance(comm, _kiln.Communicator):
            fail(f"kiln.jit: comm must be a kiln.distributed communicator, "
                 f"not {type(comm).__name__}", TypeError)
        if self._batch and comm is None:
            fail("kiln.jit: batch_argnums splits batches over the ranks of "
                 "a communicator; pass comm=kiln.distributed.mpi()", TypeError)
        if set(self._batch) & set(self._static):
            fail("kiln.jit: an argument cannot be both static and a batch",
                 TypeError)
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        if not all(isinstance(i, int) and i >= 0 for i in donate_argnums):
            fail(f"kiln.jit: donate_argnums holds argument positions, not "
                 f"{donate_argnums!r}", TypeError)
        self._donate = tuple(sorted(set(donate_argnums)))
        if set(self._donate) & set(self._static):
            fail("kiln.jit: a static argument has no buffer to donate",
                 TypeError)
        if zero not in (0, 1, 2, 3):
            fail(f"kiln.jit: zero is a ZeRO stage, 1, 2 or 3 (0: none), not "
                 f"{zero!r}", ValueError)
        if zero and not self._batch:
            fail("kiln.jit: ZeRO shards a data-parallel step; name its "
                 "batches in batch_argnums", TypeError)
        if isinstance(shard_outnums, int):
            shard_outnums = (shard_outnums,)
        self._comm = comm
        self._zero = zero
        self._shard_out = tuple(sorted(shard_outnums))
        self._parallel = dict(bucket_mb=float(bucket_mb), overlap=bool(overlap))
        self._mesh = None
        if mesh is not None:
            if comm is None:
                fail("kiln.jit: a mesh is laid out over the ranks of a "
                     "communicator; pass comm=kiln.distributed.mpi()",
                     TypeError)
            if self._batch or zero:
                fail("kiln.jit: mesh= cannot be combined with batch_argnums "
                     "or zero=; split the batch over a mesh axis instead",
                     TypeError)
            if (not isinstance(mesh, dict) or not mesh or not all(
                    isinstance(k, str) and k and isinstance(v, int) and v >= 1
                    for k, v in mesh.items())):
                fail(f"kiln.jit: mesh is a dict of axis sizes such as "
                     f"{{'dp': 2, 'tp': 2}}, not {mesh!r}", TypeError)
            ranks = 1
            for size in mesh.values():
                ranks *= size
            if ranks != comm.size:
                fail(f"kiln.jit: the mesh {mesh} has {ranks} ranks but the "
                     f"communicator {comm.size}", ValueError)
            self._mesh = dict(mesh)
        elif in_shardings or out_shardings is not None or bucket_axis:
            fail("kiln.jit: in_shardings, out_shardings and bucket_axis "
                 "split arrays over a mesh; pass mesh=", TypeError)
        if not isinstance(in_shardings, (tuple, list)):
            fail("kiln.jit: in_shardings has one entry per positional "
                 "argument (a tuple)", TypeError)
        self._in_shardings = tuple(in_shardings)
        self._out_shardings = out_shardings
        self._bucket_axis = bucket_axis or ""
        self._name = _symbol(name or getattr(fun, "__name__", "fn"))
        self._opt_level = opt_level
        if autocast not in (None, "bf16", "f16"):
            fail(f"kiln.jit: autocast is 'bf16' or 'f16' (None: off), not "
                 f"{autocast!r}", ValueError)
        self._autocast = autocast or ""
        self._profile = bool(profile)
        self._cache = {}
        self._dispatch = _kiln.Dispatcher(_MISS)
        self.last_trace_seconds = 0.0
        self.last_compile_seconds = 0.0
        functools.update_wrapper(self, fun, updated=())

    def __call__(self, *args, **kwargs):
        if not kwargs:
            result = self._dispatch(*args)
            if result is not _MISS:
                return result
        return self._call(args, kwargs)

    def __get__(self, instance, owner):
        # As a decorator on a method: bind like a function.
        return self if instance is None else functools.partial(self, instance)

    @property
    def cache_size(self):
        """How many signatures have been compiled."""
        return len(self._cache)

    def lower(self, *args, **kwargs):
        """Traces for these arguments' signature; the result shows the IR
        (as_text()) and compiles."""
        key = self._key(*self._flatten(args, kwargs))
        return Lowered(*self._trace(key), self, key)

    def compile(self, *args, **kwargs):
        """The compiled function for these arguments' signature."""
        key = self._key(*self._flatten(args, kwargs))
        return Compiled(self._entry(key), key[0])

    # --- internals -----------------------------------------------------------

    def _flatten(self, args, kwargs):
        """(static argument values, dynamic leaves, their TreeDef): the
        dynamic arguments and the keywords form one pytree."""
        for i in self._static:
            if i >= len(args):
                fail(f"kiln.jit: static_argnums names argument {i} but the "
                     f"call passes {len(args)}", TypeError)
        statics = tuple(args[i] for i in self._static)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static)
        leaves, in_def = _tree.flatten((dynamic, kwargs))
        return statics, leaves, in_def

    def _key(self, statics, leaves, in_def):
        """The cache key of a call: (TreeDef, static values, leaf specs)."""
        try:
            hash(statics)
        except TypeError:
            fail("kiln.jit: static arguments must be hashable", TypeError)
        specs = tuple(_block_spec(leaf, self._comm, f"argument leaf {i}")
                      if isinstance(leaf, Sharded)
                      else _leaf_spec(leaf, f"argument leaf {i}", self._device)
                      for i, leaf in enumerate(leaves))
        return in_def, statics, specs

    def _call(self, args, kwargs):
        statics, leaves, in_def = self._flatten(args, kwargs)
        if any(isinstance(leaf, Tensor) for leaf in leaves):
            # Inside another trace: inline, as nested jit does in JAX.
            return self._fun(*args, **kwargs)
        key = self._key(statics, leaves, in_def)
        if self._device == "cuda":
            # Said before tracing and compiling for a device that is not
            # there.
            _device.require_cuda(self._name)
        entry = self._entry(key)
        # The fast path does not know ZeRO's blocks, nor calls that stay on a
        # GPU.
        if (not kwargs and not self._static and not entry.dispatched
                and entry.blocks is None and entry.cuda is None):
            entry.dispatched = self._dispatch.add(
                in_def.children[0], leaves, entry.compiled, entry.out_def)
        return entry.call(leaves)

    def _trace(self, key):
        """(TracedFunction, output TreeDef, seconds) for the signature."""
        in_def, statics, specs = key
        out_defs = []

        def flat_fun(flat):
            dynamic, kw = in_def.unflatten(flat)
            args, dyn = [], iter(dynamic)
            static = iter(statics)
            for i in range(len(dynamic) + len(statics)):
                args.append(next(static) if i in self._static else next(dyn))
            result = self._fun(*args, **kw)
            out_leaves, out_def = _tree.flatten(result)
            if not out_leaves:
                fail(f"kiln.jit: '{self._name}' must return at least one "
                     "array", TypeError)
            out_defs.append(out_def)
            return [_core.as_tensor(leaf) for leaf in out_leaves]

        # With data parallelism the function is traced for the whole batch:
        # the blocks of all ranks.
        shapes = [list(spec[1]) for spec in specs]
        for i in self._batch_leaves(in_def, len(statics)):
            if not shapes[i]:
                fail(f"kiln.jit: batch argument leaf {i} is a scalar; a batch "
                     f"is split along its leading dimension", TypeError)
            shapes[i][0] *= self._comm.size
        # With a mesh it is traced for whole arrays: each split dimension
        # is the block's times its axis's size.
        for i, spec in enumerate(self._argument_shardings(in_def, statics,
                                                          shapes)):
            for d, axis in enumerate(spec):
                if axis:
                    shapes[i][d] *= self._mesh[axis]
        start = time.perf_counter()
        traced = _kiln.trace(self._name,
                             [(spec[0], shapes[i], f"arg{i}")
                              for i, spec in enumerate(specs)],
                             flat_fun)
        return traced, out_defs[0], time.perf_counter() - start

    def _block_results(self, traced, out_def):
        """[(output leaf index, whole shape)] of the results returned as
        blocks: every leaf of rank >= 1 of the outputs in shard_outnums."""
        if out_def.kind != "tuple" and self._shard_out:
            fail("kiln.jit: shard_outnums needs a function that returns a "
                 "tuple", TypeError)
        shapes = [list(spec[2]) for spec in traced.outputs]  # (name, dtype, shape)
        blocks, first = [], 0
        for n, child in enumerate(out_def.children if out_def.kind == "tuple"
                                  else ()):
            if n in self._shard_out:
                blocks += [(i, shapes[i])
                           for i in range(first, first + child.num_leaves)
                           if shapes[i]]
            first += child.num_leaves
        return blocks

    def _parallel_options(self, key, traced, out_def, blocks=None):
        """The keywords of _kiln.compile that rewrite the function for the
        ranks of comm: a mesh, or data parallelism (and ZeRO)."""
        options = dict(comm=self._comm, autocast=self._autocast,
                       profile=self._profile, **self._parallel)
        if self._mesh is not None:
            shapes = [list(spec[1]) for spec in key[2]]
            options.update(
                mesh_axes=list(self._mesh),
                mesh_shape=list(self._mesh.values()),
                argument_shardings=self._argument_shardings(key[0], key[1],
                                                            shapes),
                result_shardings=self._result_shardings(traced, out_def),
                bucket_axis=self._bucket_axis)
            return options
        if blocks is None and self._zero:
            blocks = self._block_results(traced, out_def)
        options.update(
            batch_args=self._batch_leaves(key[0], len(key[1])),
            zero_stage=self._zero,
            sharded_args=[(i, list(spec[1])) for i, spec in enumerate(key[2])
                          if len(spec) == 3],
            sharded_results=[i for i, _ in blocks or ()])
        return options

    def _expand_shardings(self, spec, tdef, where):
        """One P or None per leaf of the pytree `tdef`, from `spec`: None
        (every leaf whole), a P (for every leaf), or a container of those
        matching the tree."""
        if spec is None or isinstance(spec, P):
            return [spec] * tdef.num_leaves
        if (tdef.kind in ("tuple", "list", "namedtuple")
                and isinstance(spec, (tuple, list))
                and len(spec) == len(tdef.children)):
            return [leaf for s, child in zip(spec, tdef.children)
                    for leaf in self._expand_shardings(s, child, where)]
        if (tdef.kind == "dict" and isinstance(spec, dict)
                and set(spec) <= set(tdef.meta)):
            return [leaf for key, child in zip(tdef.meta, tdef.children)
                    for leaf in self._expand_shardings(spec.get(key), child,
                                                       where)]
        fail(f"kiln.jit: {where} {spec!r} does not match the structure "
             f"{tdef!r}; give a kiln.distributed.P, None, or a container of "
             f"those shaped like it", TypeError)

    def _check_spec(self, spec, rank, where):
        """The per-dimension axis names ("" for none) of `spec` for an
        array of rank `rank`."""
        if spec is None:
            return []
        if len(spec.axes) != rank:
            fail(f"kiln.jit: {where} is split as {spec!r}, with "
                 f"{len(spec.axes)} entries, but has rank {rank}", ValueError)
        for axis in spec.axes:
            if axis is not None and axis not in self._mesh:
                fail(f"kiln.jit: {where} is split over {axis!r}, which the "
                     f"mesh {self._mesh} does not have", ValueError)
        return [axis or "" for axis in spec.axes]

    def _argument_shardings(self, in_def, statics, shapes):
        """Per traced argument leaf, its axis names per dimension ([] for
        whole); empty without a mesh."""
        if self._mesh is None:
            return []
        dynamic = in_def.children[0].children
        positions = [i for i in range(len(dynamic) + len(statics))
                     if i not in self._static]
        if len(self._in_shardings) > len(dynamic) + len(statics):
            fail(f"kiln.jit: in_shardings has {len(self._in_shardings)} "
                 f"entries but the call passes "
                 f"{len(dynamic) + len(statics)} arguments", TypeError)
        specs = []
        for position, child in zip(positions, dynamic):
            spec = (self._in_shardings[position]
                    if position < len(self._in_shardings) else None)
            specs += self._expand_shardings(
                spec, child, f"in_shardings[{position}]")
        specs += [None] * in_def.children[1].num_leaves  # keywords: whole
        return [self._check_spec(spec, len(shapes[i]), f"argument leaf {i}")
                for i, spec in enumerate(specs)]

    def _result_shardings(self, traced, out_def):
        """Per output leaf, its axis names per dimension ([] for whole)."""
        specs = self._expand_shardings(self._out_shardings, out_def,
                                       "out_shardings")
        return [self._check_spec(spec, len(traced.outputs[i][2]),
                                 f"output leaf {i}")
                for i, spec in enumerate(specs)]

    def _batch_leaves(self, in_def, static_count):
        """The indices of the leaves of the batch arguments (every leaf of
        each argument in batch_argnums)."""
        return self._argument_leaves(in_def, static_count, self._batch,
                                     "batch_argnums")

    def _donated_leaves(self, key):
        """The indices of the leaves of the donated arguments."""
        return self._argument_leaves(key[0], len(key[1]), self._donate,
                                     "donate_argnums")

    def _argument_leaves(self, in_def, static_count, argnums, option):
        """The indices of the leaves of the positional arguments `argnums`
        (named `option` in messages)."""
        if not argnums:
            return []
        dynamic = in_def.children[0].children
        positions = [i for i in range(len(dynamic) + static_count)
                     if i not in self._static]
        for i in argnums:
            if i >= len(positions) + static_count:
                fail(f"kiln.jit: {option} names argument {i} but the "
                     f"call passes {len(positions) + static_count}", TypeError)
        leaves, first = [], 0
        for position, child in zip(positions, dynamic):
            if position in argnums:
                leaves.extend(range(first, first + child.num_leaves))
            first += child.num_leaves
        return leaves

    def _entry(self, key, lowered=None):
        """The compiled function for `key`: from the cache, or traced
        (unless `lowered` gives the trace) and compiled now."""
        entry = self._cache.get(key)
        if entry is None:
            traced, out_def, seconds = lowered or self._trace(key)
            blocks = (self._block_results(traced, out_def) if self._zero
                      else None)
            donate = self._donated_leaves(key)
            if self._comm is None:
                compiled = _kiln.compile(traced, self._opt_level,
                                         autocast=self._autocast,
                                         profile=self._profile, donate=donate,
                                         device=self._device,
                                         cuda_arch=self._cuda_arch,
                                         **self._cuda_flags)
            else:
                compiled = _kiln.compile(
                    traced, self._opt_level, donate=donate,
                    **self._parallel_options(key, traced, out_def, blocks))
            for message in compiled.warnings:
                warnings.warn(f"kiln.jit: '{self._name}': {message}",
                              RuntimeWarning, stacklevel=3)
            if compiled.unused_donations and self._device == "cuda":
                warnings.warn(
                    f"kiln.jit: '{self._name}': donated argument leaves "
                    f"{list(compiled.unused_donations)} are left as they "
                    f"are: on a GPU every output gets its own buffer",
                    stacklevel=3)
            elif compiled.unused_donations:
                warnings.warn(
                    f"kiln.jit: '{self._name}': donated argument leaves "
                    f"{list(compiled.unused_donations)} match no output of "
                    f"their dtype and shape, and are left as they are",
                    stacklevel=3)
            entry = self._cache[key] = _Entry(compiled, out_def, seconds,
                                              self._comm, blocks,
                                              cuda=self._device == "cuda")
            self.last_trace_seconds = seconds
            self.last_compile_seconds = compiled.compile_seconds
        return entry
