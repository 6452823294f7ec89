"""One OpenMP runtime per process. The compiled modules' parallel loops run
on LLVM's libomp and Debian's oneDNN is built on GCC's libgomp; libomp
implements libgomp's entry points, and kiln's libraries and modules need
libomp ahead of libdnnl, so that oneDNN's threads are libomp's too. With
two runtimes, each pool's idle workers spin on the CPUs the other's need.

Each check runs in a fresh process with OMP_NUM_THREADS=2: after a
parallel kiln loop and a oneDNN product large enough to run on both
threads, the process holds one worker thread beside the main one (two
runtimes would hold two)."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    from_runtime = sys.argv[1] == "runtime"
    if from_runtime:
        import kiln_runtime
        module = kiln_runtime.load(sys.argv[2])
        call = module[module.function_names[0]]
    else:
        import kiln
        call = kiln.jit(lambda a, b: (a @ b) * 2.0 + b)
    a = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    for _ in range(3):
        out = call(a, a)
    np.testing.assert_allclose(np.asarray(out[0] if isinstance(out, (list, tuple)) else out),
                               (a @ a) * 2.0 + a, rtol=1e-4, atol=1e-3)
    print(len(os.listdir("/proc/self/task")))
""")


def threads_after(*args):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    done = subprocess.run([sys.executable, "-c", SCRIPT] + list(args),
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split()[-1])


def needs_two_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs for a team of two threads")


def test_jit_and_onednn_share_one_thread_pool():
    needs_two_cpus()
    assert threads_after("jit") == 2


def test_saved_module_and_onednn_share_one_thread_pool(tmp_path):
    needs_two_cpus()
    import numpy as np

    import kiln
    a = np.zeros((512, 512), np.float32)
    path = tmp_path / "f.kmod"
    kiln.jit(lambda a, b: (a @ b) * 2.0 + b, name="f").lower(a, a) \
        .compile().save(str(path))
    assert threads_after("runtime", str(path)) == 2
