"""An elastic data-parallel training run, for test_elastic.py and
bench/elastic.py: linear regression with momentum SGD in f64 on a fixed
data set, each step on its own global batch of BATCH rows split over the
workers of the current generation.

    kiln-launch --nproc MIN:MAX ... -- python3 elastic_worker.py OUT_DIR \
        [--steps S] [--commit-every C] [--sleep SECONDS]
        [--kill RANK:STEP:WHERE] [--marker FILE]

--kill makes the worker of rank RANK, when the state reaches step STEP,
die by SIGKILL: `between` steps, during the gradient all-reduce
(`allreduce`: it comes 0.2 s late to the step, while the others wait in
its collectives, and is killed 2 ms after entering it) or during the
commit after step STEP (`commit`: after its copy, while the others agree
on whether workers wait). The marker file
makes it happen once in the whole run. The worker that finishes with rank
0 writes OUT_DIR/result.json: the parameters, the step, the rows consumed
and the run size of every step of the final trajectory.
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
from kiln.distributed import elastic

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
    parser.add_argument("--kill", default="")
    parser.add_argument("--marker", default="")
    args = parser.parse_args()
    victim = None
    if args.kill:
        rank, step, where = args.kill.split(":")
        victim = (int(rank), int(step), where)

    x_all, y_all = data(args.steps)
    step_fn = elastic.jit(train_step, batch_argnums=(2, 3))
    state = elastic.State(w=np.zeros(DIM), v=np.zeros(DIM), step=0,
                          position=0, sizes=[])

    def die_now():
        if args.marker:
            try:
                fd = os.open(args.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return False
            os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        return True

    def chosen(where):
        comm = elastic.comm()
        return (victim is not None and victim[2] == where
                and comm.rank == victim[0] and state.step == victim[1]
                and not (args.marker and os.path.exists(args.marker)))

    @elastic.run
    def train(state):
        comm = elastic.comm()
        while state.step < args.steps:
            if chosen("between"):
                die_now()
            if chosen("allreduce"):
                # The others wait in the step's collectives meanwhile.
                time.sleep(0.2)
                threading.Timer(0.002, die_now).start()
            rows = slice(state.position, state.position + BATCH)
            _, state.w, state.v = step_fn(state.w, state.v,
                                          elastic.block(x_all[rows]),
                                          elastic.block(y_all[rows]))
            state.step += 1
            state.position += BATCH
            state.sizes = state.sizes + [comm.size]
            if args.sleep:
                time.sleep(args.sleep)
            if state.step % args.commit_every == 0:
                if chosen("commit"):
                    state.save()
                    die_now()
                state.commit()
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
