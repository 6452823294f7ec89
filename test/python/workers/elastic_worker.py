"""An elastic data-parallel training run, for test_elastic.py and
bench/elastic.py: linear regression with momentum SGD in f64 on a fixed
data set, each step on its own global batch of BATCH rows split over the
workers of the current generation.

    kiln-launch --nproc MIN:MAX ... -- python3 elastic_worker.py OUT_DIR \
        [--steps S] [--commit-every C] [--sleep SECONDS]
        [--kill RANK:STEP:WHERE] [--marker FILE] [--progress FILE]

--kill (repeatable) makes the worker of rank RANK, when the state reaches
step STEP,
die by SIGKILL: `between` steps, during the gradient all-reduce
(`allreduce`: it comes 0.2 s late to the step, while the others wait in
its collectives, and is killed 2 ms after entering it) or during the
commit after step STEP (`commit`: after its copy, while the others agree
on whether workers wait), or hang: `stop` stops it (SIGSTOP) before step
STEP, its pid in the marker file. --disagree STEP makes the ranks
disagree on a gather at that step, every time. Marker files (--marker FILE: FILE.0, FILE.1,
...) make each kill happen once in the whole run. --zero S trains with
kiln.optim's momentum SGD under ZeRO stage S instead, its optimizer state
(and at stage 3 its parameters) sharded over the workers. The worker that finishes with rank
0 writes OUT_DIR/result.json: the parameters, the step, the rows consumed
and the run size of every step of the final trajectory. --progress FILE
makes rank 0 write the state's step into FILE after every commit, for a
test to start another launcher once the run is under way.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

import numpy as np

import kiln
import kiln.numpy as knp
from kiln.distributed import elastic, unshard

BATCH, DIM, LR, MOMENTUM = 12, 8, 0.05, 0.9


def data(steps):
    rng = np.random.default_rng(1234)
    x = rng.standard_normal((steps * BATCH, DIM))
    y = x @ rng.standard_normal(DIM) + 0.1 * rng.standard_normal(steps * BATCH)
    return x, y


def train_step(w, v, x, y):
    loss, g = kiln.value_and_grad(lambda w: knp.mean((x @ w - y) ** 2))(w)
    v = MOMENTUM * v + g
    return loss, w - LR * v, v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--commit-every", type=int, default=2)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--kill", action="append", default=[])
    parser.add_argument("--marker", default="")
    parser.add_argument("--zero", type=int, default=0)
    parser.add_argument("--disagree", type=int, default=-1)
    parser.add_argument("--progress", default="")
    args = parser.parse_args()
    victims = []
    for number, kill in enumerate(args.kill):
        rank, step, where = kill.split(":")
        victims.append((int(rank), int(step), where,
                        f"{args.marker}.{number}" if args.marker else ""))

    x_all, y_all = data(args.steps)
    if args.zero:
        # The same training with kiln.optim's momentum SGD, its buffer (and
        # at stage 3 the parameters) ZeRO-sharded over the workers.
        opt = kiln.optim.sgd(LR, momentum=MOMENTUM)

        def zero_step(params, opt_state, x, y):
            loss, g = kiln.value_and_grad(
                lambda p: knp.mean((x @ p["w"] - y) ** 2))(params)
            params, opt_state = opt.update(params, g, opt_state)
            return loss, params, opt_state

        step_fn = elastic.jit(
            zero_step, batch_argnums=(2, 3), zero=args.zero,
            shard_outnums=(1, 2) if args.zero == 3 else (2,))
        params = {"w": np.zeros(DIM)}
        state = elastic.State(
            sharded=("params", "opt") if args.zero == 3 else ("opt",),
            params=params, opt=opt.init(params), step=0, position=0,
            sizes=[])
    else:
        step_fn = elastic.jit(train_step, batch_argnums=(2, 3))
        state = elastic.State(w=np.zeros(DIM), v=np.zeros(DIM), step=0,
                              position=0, sizes=[])

    def apply_step(x, y):
        if args.zero:
            _, state.params, state.opt = step_fn(state.params, state.opt,
                                                 x, y)
        else:
            _, state.w, state.v = step_fn(state.w, state.v, x, y)

    def die_now(marker):
        if marker:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return False
            os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        return True

    def chosen(where):
        """The marker of the kill due here, or None."""
        comm = elastic.comm()
        for rank, step, kind, marker in victims:
            if (kind == where and comm.rank == rank and state.step == step
                    and not (marker and os.path.exists(marker))):
                return marker
        return None

    @elastic.run
    def train(state):
        comm = elastic.comm()
        while state.step < args.steps:
            marker = chosen("between")
            if marker is not None:
                die_now(marker)
            if state.step == args.disagree:
                # A program bug, not a failure: rank 0 gathers another size
                # than the others, at every try.
                comm.all_gather(np.zeros(1 + (comm.rank == 0)))
            marker = chosen("stop")
            if marker is not None:
                # Hangs (SIGSTOP) instead of dying: the others notice within
                # the detection timeout. The marker holds the pid, for the
                # test to let it go on (SIGCONT) once the run has finished.
                with open(marker, "w") as f:
                    f.write(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGSTOP)
            marker = chosen("allreduce")
            if marker is not None:
                # The others wait in the step's collectives meanwhile.
                time.sleep(0.2)
                threading.Timer(0.002, die_now, (marker,)).start()
            rows = slice(state.position, state.position + BATCH)
            apply_step(elastic.block(x_all[rows]), elastic.block(y_all[rows]))
            state.step += 1
            state.position += BATCH
            state.sizes = state.sizes + [comm.size]
            if args.sleep:
                time.sleep(args.sleep)
            if state.step % args.commit_every == 0:
                marker = chosen("commit")
                if marker is not None:
                    state.save()
                    die_now(marker)
                state.commit()
                if args.progress and comm.rank == 0:
                    # Whole or not at all: the reader polls while it is
                    # written.
                    with open(args.progress + ".tmp", "w") as f:
                        f.write(str(state.step))
                    os.replace(args.progress + ".tmp", args.progress)
        if args.zero:
            # Whole again, on every member (collective).
            state.w = unshard(state.params, comm)["w"]
            state.v = unshard(state.opt, comm)["momentum_buffer"]["w"]
        return comm.rank

    rank = train(state)
    print(f"worker done: rank {rank}, step {state.step}, sizes "
          f"{state.sizes}, compiled for {step_fn.sizes}", flush=True)
    if rank == 0:
        with open(os.path.join(args.out, "result.json"), "w") as f:
            json.dump({"w": state.w.tolist(), "v": state.v.tolist(),
                       "step": state.step, "position": state.position,
                       "sizes": state.sizes}, f)


if __name__ == "__main__":
    main()
