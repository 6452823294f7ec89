"""kiln.distributed.elastic: training that goes on when workers die or
arrive, as Horovod's elastic mode (hvd.elastic) does it.

    # kiln-launch --nproc 2:4 --store redis://HOST:6379 -- python3 train.py
    from kiln.distributed import elastic

    step = elastic.jit(train_step, batch_argnums=(1, 2))
    state = elastic.State(params=params, opt=opt_state, step=0)

    @elastic.run
    def train(state):
        while state.step < steps:
            x, y = global_batch(state.step)       # the same on every worker
            state.params, state.opt, loss = step(
                state.params, elastic.block(x), elastic.block(y), state.opt)
            state.step += 1
            if state.step % 10 == 0:
                state.commit()

    train(state)

The workers learn their rank and the run's size from the run's store at
each rendezvous (kiln-launch sets the environment; see kiln_elastic_open in
kiln/runtime.h). `run` joins the run, takes the newest state from the
member that holds it (`sync`), and calls the training function. When a
collective fails because a member died or hangs (CommunicationError), every
survivor goes back to its last commit (`restore`), the survivors form the
next generation, take the newest commit among them, and call the function
again; when workers wait to join, the members notice it at a commit and
form a generation with them. The state is the only thing that survives:
everything the function needs to go on (parameters, optimizer state, the
step, the position in the data, random keys) belongs in it.

`jit` compiles the step once per size of the run and keeps the modules, so
a size the run has had before costs no compilation.
"""

import functools
import os
import pickle
import sys
import time

import numpy as np

from .. import _kiln, _tree
from .._jit import jit as _jit
from . import Sharded, block as _block, shard as _shard

__all__ = ["State", "run", "jit", "comm", "block", "generation",
           "CommunicationError"]

CommunicationError = _kiln.CommunicationError

_worker_instance = None
_generation = -1


def _worker():
    """This process's part in the elastic run (opened once)."""
    global _worker_instance
    if _worker_instance is None:
        _worker_instance = _kiln.Elastic()
    return _worker_instance


def comm():
    """The communicator over the current generation's members. It is one
    object for the whole run: its rank and size change at each
    rendezvous."""
    return _worker().comm


def generation():
    """The generation joined last (0, 1, ...; -1 before the first)."""
    return _generation


def block(array):
    """This worker's block of `array`'s rows in the current generation
    (kiln.distributed.block over comm())."""
    return _block(array, comm())


def _copy_leaf(leaf):
    """An array copied; any other leaf (a number) as it is."""
    return np.array(leaf, copy=True) if isinstance(leaf, np.ndarray) else leaf


def _copy(tree):
    return _tree.tree_map(_copy_leaf, tree)


def _copy_into(saved, values):
    """A copy of `values` that reuses the arrays of `saved` (an earlier
    copy) where the structure, shapes and dtypes match, so that a commit
    writes into memory it has touched before instead of faulting in fresh
    pages. `saved` may be None (no earlier copy)."""
    flat, treedef = _tree.flatten(values)
    old, old_def = _tree.flatten(saved)
    if old_def != treedef:
        return _copy(values)
    out = []
    for leaf, previous in zip(flat, old):
        if (isinstance(leaf, np.ndarray) and isinstance(previous, np.ndarray)
                and previous.shape == leaf.shape
                and previous.dtype == leaf.dtype and previous is not leaf):
            np.copyto(previous, leaf)
            out.append(previous)
        else:
            out.append(_copy_leaf(leaf))
    return treedef.unflatten(out)


class _ShardCopy:
    """A commit's copy of a ZeRO-sharded tensor: the blocks this worker
    keeps of the `size` blocks it was split into (its own and the next
    rank's, so that any one worker's death loses nothing)."""

    __slots__ = ("shape", "dtype", "size", "blocks")

    def __init__(self, shape, dtype, size, blocks):
        self.shape, self.dtype, self.size = tuple(shape), dtype, size
        self.blocks = blocks

    def skeleton(self):
        """The same without the data, as the root sends it."""
        return _ShardCopy(self.shape, self.dtype, self.size, {})


def _keep_blocks(leaf, channel):
    """The _ShardCopy of a Sharded leaf (collective: every member's block
    goes to every member), other leaves copied."""
    if not isinstance(leaf, Sharded):
        return _copy_leaf(leaf)
    block = np.ascontiguousarray(leaf.block)
    whole = channel.all_gather(block)
    c, rank, size = block.shape[0], channel.rank, channel.size
    kept = {r: whole[r * c:(r + 1) * c].copy()
            for r in {rank, (rank + 1) % size}}
    return _ShardCopy(leaf.shape, block.dtype, size, kept)


def _reassemble(skeleton, mine, channel):
    """`skeleton` (the root's commit, ZeRO tensors without their blocks)
    with every sharded tensor put back together whole from the blocks the
    members holding that commit kept; `mine` is this worker's copy of it
    (None if it holds another commit)."""
    flat, treedef = _tree.flatten(skeleton)
    own = None
    if mine is not None:
        own_flat, own_def = _tree.flatten(mine)
        own = own_flat if own_def == treedef else None
    sharded = [i for i, leaf in enumerate(flat) if isinstance(leaf, _ShardCopy)]
    if not sharded:
        return skeleton
    widest = max(flat[i].size for i in sharded)
    held = np.zeros((1, len(sharded), widest), np.int64)
    for k, i in enumerate(sharded):
        copy = own[i] if own is not None else None
        if isinstance(copy, _ShardCopy) and copy.size == flat[i].size:
            for r in copy.blocks:
                held[0, k, r] = 1
    held = channel.all_gather(held)   # (members, tensors, blocks)
    for k, i in enumerate(sharded):
        meta = flat[i]
        count = int(np.prod(meta.shape, dtype=np.int64))
        c = -(-count // meta.size)
        parts = []
        for r in range(meta.size):
            holders = np.nonzero(held[:, k, r])[0]
            if holders.size == 0:
                raise RuntimeError(
                    f"kiln elastic: block {r} of {meta.size} of a ZeRO-sharded "
                    f"tensor of shape {meta.shape} was lost with its workers "
                    f"(each worker keeps its own block and the next rank's: "
                    f"two neighbours failed between commits); the run cannot "
                    f"go on from its last commit")
            source = int(holders[0])
            part = (own[i].blocks[r] if channel.rank == source
                    else np.zeros(c, meta.dtype))
            parts.append(channel.broadcast(np.ascontiguousarray(part),
                                           source))
        flat[i] = np.concatenate(parts)[:count].reshape(meta.shape)
    return treedef.unflatten(flat)


class _MembersWaiting(Exception):
    """Raised by commit when workers wait to join: the members re-form."""


class State:
    """What an elastic run's training keeps across failures: named values
    (arrays, pytrees of them, Python numbers), read and written as
    attributes. `commit()` keeps an in-memory copy, `restore()` goes back
    to it, and after each rendezvous every member takes the copy of the
    member with the newest commit (`sync`).

    Values named in `sharded` are held ZeRO-sharded over the run's members
    (kiln.distributed.Sharded blocks, what kiln.jit(..., zero=S) takes):
    given whole, they are cut into blocks for the first generation; a
    commit keeps each worker's block and the next rank's, and after a
    rendezvous the blocks of the last commit are put back together and cut
    again for the new size, so the run goes on at any size after any one
    worker's death."""

    def __init__(self, sharded=(), **values):
        if isinstance(sharded, str):
            sharded = (sharded,)
        unknown = [name for name in sharded if name not in values]
        if unknown:
            raise ValueError(f"kiln.distributed.elastic.State: sharded names "
                             f"{unknown}, which are not values of the state")
        object.__setattr__(self, "_sharded", tuple(sharded))
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_saved", _copy(dict(values)))
        # Commits made; -1: none, a worker that holds nothing of the run.
        object.__setattr__(self, "_serial", -1)
        object.__setattr__(self, "_reset_callbacks", [])

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"the elastic state has no value {name!r}")

    def __setattr__(self, name, value):
        self._values[name] = value

    @property
    def commits(self):
        """How many commits the run's state has had."""
        return max(self._serial, 0)

    def save(self):
        """Keeps an in-memory copy of the values (commit without asking
        whether workers wait to join). Collective when values are
        sharded."""
        self._keep()
        object.__setattr__(self, "_serial", self._serial + 1)

    def _keep(self):
        saved = {}
        for name, value in self._values.items():
            if name in self._sharded:
                channel = comm()
                saved[name] = _tree.tree_map(
                    lambda leaf: _keep_blocks(leaf, channel), value)
            else:
                saved[name] = _copy_into(self._saved.get(name), value)
        object.__setattr__(self, "_saved", saved)

    def commit(self):
        """Keeps an in-memory copy of the values, then asks the members
        whether workers wait to join; if so, the run re-forms with them
        before going on (from this commit)."""
        self.save()
        if _worker().members_waiting():
            raise _MembersWaiting()

    def restore(self):
        """Goes back to the last commit (of the current generation)."""
        rank = comm().rank

        def back(leaf):
            if isinstance(leaf, _ShardCopy):
                return Sharded(leaf.blocks[rank].copy(), leaf.shape)
            return _copy_leaf(leaf)

        object.__setattr__(self, "_values", _tree.tree_map(back, self._saved))

    def sync(self, root=0):
        """Every member takes the last commit of member `root`, the sharded
        values put back together from the blocks the members kept and cut
        for the current generation. Collective."""
        channel = comm()
        skeleton = _tree.tree_map(
            lambda leaf: leaf.skeleton() if isinstance(leaf, _ShardCopy)
            else leaf, self._saved)
        payload = np.frombuffer(
            pickle.dumps((self._serial, skeleton), protocol=5),
            dtype=np.uint8) if channel.rank == root else np.zeros(0, np.uint8)
        size = channel.broadcast(np.array([payload.size], np.int64), root)
        if channel.rank != root:
            payload = np.zeros(int(size[0]), np.uint8)
        payload = channel.broadcast(payload, root)
        serial, skeleton = pickle.loads(payload.tobytes())
        whole = _reassemble(skeleton,
                            self._saved if self._serial == serial else None,
                            channel)
        # Fresh arrays (unpickled, put back together, cut): the values, of
        # which _keep makes the commit's own copy.
        values = {name: _shard(value, channel) if name in self._sharded
                  else value for name, value in whole.items()}
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_serial", serial)
        self._keep()

    def register_reset_callbacks(self, callbacks):
        """Functions called with no arguments after every rendezvous, once
        the state is synchronized (to rebuild what depends on the run's
        size, such as a data loader's shard)."""
        self._reset_callbacks.extend(callbacks)


def _say(message):
    print(f"kiln elastic: {message}", file=sys.stderr, flush=True)


def run(fun):
    """Wraps a training function `fun(state, *args, **kwargs)` so that it
    runs elastically: joined to the run and synchronized first, started
    again from the last commit of the survivors when a member fails, and
    from the commit that saw them when workers join. Returns fun's result;
    None in a worker that arrived after the run had finished. A commit that
    fails more than KILN_ELASTIC_RETRIES times in a row (default 3) ends
    the run with its error: ranks that disagree on a collective fail the
    same way at every try."""

    @functools.wraps(fun)
    def wrapper(state, *args, **kwargs):
        if not isinstance(state, State):
            raise TypeError(f"kiln.distributed.elastic.run: the first "
                            f"argument is the elastic State, not "
                            f"{type(state).__name__}")
        global _generation
        worker = _worker()
        limit = _retry_limit()
        retries, failed_at = 0, None
        while True:
            began = time.perf_counter()
            generation, root = worker.rendezvous(state._serial)
            if generation < 0:
                _say("the run finished before this worker joined it")
                return None
            _generation = generation
            state.sync(root)
            if state._serial < 0:
                # The first generation: its start is commit 0.
                object.__setattr__(state, "_serial", 0)
            _say(f"generation {generation}: rank {worker.comm.rank} of "
                 f"{worker.comm.size}, from commit {state._serial} of rank "
                 f"{root} ({time.perf_counter() - began:.2f} s)")
            for callback in state._reset_callbacks:
                callback()
            try:
                result = fun(state, *args, **kwargs)
            except CommunicationError as error:
                # The same commit failing again and again is a program that
                # cannot go on (ranks that disagree on a collective), not
                # workers dying.
                retries = retries + 1 if failed_at == state._serial else 1
                failed_at = state._serial
                if retries > limit:
                    _say(f"generation {generation} failed {retries} times "
                         f"from commit {state._serial} without a new commit "
                         f"(KILN_ELASTIC_RETRIES={limit}); giving up")
                    raise
                _say(f"generation {generation} failed ({error}); back to "
                     f"commit {state._serial}")
                state.restore()
                continue
            except _MembersWaiting:
                _say(f"workers wait to join; generation {generation} "
                     f"re-forms at commit {state._serial}")
                continue
            worker.finish()
            return result

    return wrapper


def _retry_limit():
    """KILN_ELASTIC_RETRIES: how many failures in a row from one commit a
    run recovers from (default 3)."""
    text = os.environ.get("KILN_ELASTIC_RETRIES", "3")
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"KILN_ELASTIC_RETRIES is {text!r}, not a count")
    return value


class jit:
    """kiln.jit for an elastic run: `fun` compiled with comm=comm() and the
    keywords of kiln.jit (batch_argnums, zero, ...), once per size of the
    run; a size seen before reuses its modules."""

    def __init__(self, fun, **options):
        if "comm" in options:
            raise TypeError("kiln.distributed.elastic.jit: the communicator "
                            "is the elastic run's; do not pass comm=")
        self._fun, self._options = fun, options
        self._by_size = {}
        functools.update_wrapper(self, fun, updated=())

    def _jitted(self):
        channel = comm()
        jitted = self._by_size.get(channel.size)
        if jitted is None:
            jitted = self._by_size[channel.size] = _jit(
                self._fun, comm=channel, **self._options)
        return jitted

    def __call__(self, *args, **kwargs):
        return self._jitted()(*args, **kwargs)

    @property
    def sizes(self):
        """The run sizes compiled for so far."""
        return sorted(self._by_size)
