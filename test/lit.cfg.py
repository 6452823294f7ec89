# -*- Python -*-
# lit configuration for kiln: every .mlir under test/ is a test; the built
# tools (kiln-opt, kiln-compile, kiln-run, kiln-launch, kiln-translate) and
# FileCheck are on PATH.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%kiln_src", config.kiln_src_root))

llvm_config.with_system_environment(["HOME", "TMPDIR", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
tools = ["kiln-opt", "kiln-compile", "kiln-run", "kiln-launch", "kiln-translate"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)

# ptxas (CUDA toolkit), for tests that assemble the CUDA backend's PTX.
if getattr(config, "kiln_ptxas", ""):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.kiln_ptxas))

# The optional libraries the CPU backend calls where they were found at
# configure time: oneDNN (f32 matmuls become dnnl_sgemm or kiln_dnnl_matmul
# calls) and LLVM's
# OpenMP runtime (parallel loops become omp.parallel / __kmpc_fork_call).
# Tests of the code that calls them are unsupported without them.
if getattr(config, "kiln_has_dnnl", False):
    config.available_features.add("dnnl")
if getattr(config, "kiln_has_openmp", False):
    config.available_features.add("openmp")
# The CUDA backend, which a build configured with -DKILN_CUDA_BACKEND=OFF
# leaves out: the tests of its passes and PTX are unsupported there.
if getattr(config, "kiln_has_cuda_backend", False):
    config.available_features.add("cuda-backend")

# mpirun and the MPI communicator plug-in (built where OpenMPI was found at
# configure time): tests that run modules with collectives on several ranks
# are unsupported without them. %mpirun starts N ranks as any user (OpenMPI
# refuses root without --allow-run-as-root), more ranks than cores allowed,
# and turns a hang into a failure.
import shutil
if shutil.which("mpirun") and os.path.exists(os.path.join(
        config.kiln_tools_dir, os.pardir, "lib", "kiln", "libkiln_comm_mpi.so")):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun",
         "timeout 120 mpirun --allow-run-as-root --oversubscribe"))

# The Gloo communicator plug-in (built where libgloo-dev was found): ranks
# started by kiln-launch, meeting through a store of its own.
if os.path.exists(os.path.join(
        config.kiln_tools_dir, os.pardir, "lib", "kiln", "libkiln_comm_gloo.so")):
    config.available_features.add("gloo")

# A loadable CUDA driver (libcuda.so.1): tests of the no-driver errors are
# unsupported where there is one.
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass

# The compiling host has AVX-512F: tests of the 512-bit code generated for
# the host CPU are unsupported elsewhere. And VNNI's (or AMX's) int8 dot
# products, without which kiln runs quantized convolutions as f32 when it
# asks oneDNN about the host (`int8-dot-products`).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("flags"):
                flags = set(line.split())
                if "avx512f" in flags:
                    config.available_features.add("avx512f")
                if flags & {"avx512_vnni", "avx_vnni", "amx_int8"}:
                    config.available_features.add("int8-dot-products")
                break
except OSError:
    pass
