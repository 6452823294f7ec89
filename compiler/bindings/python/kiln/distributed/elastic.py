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
import pickle
import sys
import time

import numpy as np

from .. import _kiln, _tree
from .._jit import jit as _jit
from . import block as _block

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


def _copy(tree):
    return _tree.tree_map(
        lambda leaf: np.array(leaf, copy=True)
        if isinstance(leaf, np.ndarray) else leaf, tree)


def _copy_into(saved, values):
    """A copy of `values` that reuses the arrays of `saved` (an earlier
    copy) where the structure, shapes and dtypes match, so that a commit
    writes into memory it has touched before instead of faulting in fresh
    pages."""
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
        elif isinstance(leaf, np.ndarray):
            out.append(np.array(leaf, copy=True))
        else:
            out.append(leaf)
    return treedef.unflatten(out)


class _MembersWaiting(Exception):
    """Raised by commit when workers wait to join: the members re-form."""


class State:
    """What an elastic run's training keeps across failures: named values
    (arrays, pytrees of them, Python numbers), read and written as
    attributes. `commit()` keeps an in-memory copy, `restore()` goes back
    to it, and after each rendezvous every member takes the copy of the
    member with the newest commit (`sync`)."""

    def __init__(self, **values):
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
        whether workers wait to join)."""
        object.__setattr__(self, "_saved", _copy_into(self._saved,
                                                      self._values))
        object.__setattr__(self, "_serial", self._serial + 1)

    def commit(self):
        """Keeps an in-memory copy of the values, then asks the members
        whether workers wait to join; if so, the run re-forms with them
        before going on (from this commit)."""
        self.save()
        if _worker().members_waiting():
            raise _MembersWaiting()

    def restore(self):
        """Goes back to the last commit."""
        object.__setattr__(self, "_values", _copy(self._saved))

    def sync(self, root=0):
        """Every member takes the last commit of member `root`."""
        channel = comm()
        payload = np.frombuffer(
            pickle.dumps((self._serial, self._saved), protocol=5),
            dtype=np.uint8) if channel.rank == root else np.zeros(0, np.uint8)
        size = channel.broadcast(np.array([payload.size], np.int64), root)
        if channel.rank != root:
            payload = np.zeros(int(size[0]), np.uint8)
        payload = channel.broadcast(payload, root)
        serial, saved = pickle.loads(payload.tobytes())
        object.__setattr__(self, "_saved", saved)
        object.__setattr__(self, "_serial", serial)
        self.restore()

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
    None in a worker that arrived after the run had finished."""

    @functools.wraps(fun)
    def wrapper(state, *args, **kwargs):
        if not isinstance(state, State):
            raise TypeError(f"kiln.distributed.elastic.run: the first "
                            f"argument is the elastic State, not "
                            f"{type(state).__name__}")
        global _generation
        worker = _worker()
        while True:
            began = time.perf_counter()
            generation, root = worker.rendezvous(state._serial)
            if generation < 0:
                _say("the run finished before this worker joined it")
                return None
            _generation = generation
            state.sync(root)
            if state._serial < 0:
                state.save()  # the first generation: the start is commit 0
            _say(f"generation {generation}: rank {worker.comm.rank} of "
                 f"{worker.comm.size}, from commit {state._serial} of rank "
                 f"{root} ({time.perf_counter() - began:.2f} s)")
            for callback in state._reset_callbacks:
                callback()
            try:
                result = fun(state, *args, **kwargs)
            except CommunicationError as error:
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
