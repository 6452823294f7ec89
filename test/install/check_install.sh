#!/usr/bin/env bash
# check_install.sh SOURCE_ROOT BUILD_DIR WORK_DIR
#
# Installs the kiln build in BUILD_DIR into WORK_DIR/prefix, then builds the
# project in test/install (which knows nothing of kiln's tree) against that
# prefix with find_package(kiln), compiles examples/models/newton_sqrt.mlir
# with the installed kiln-compile and runs the hosts: the C host linking
# kiln::runtime, the C++ host linking kiln::jit, and the one importing an
# ONNX model with kiln::onnx (find_package(kiln 0.1), the version file).
#
# The install must stand alone: a copy of it moved elsewhere compiles and
# runs a model whose code calls kiln's support archives (a oneDNN
# convolution and product, an attention kernel), with the result of the
# build tree's tools; without its archive, it fails saying so rather than
# reading the build tree's.
set -euo pipefail

src="$1"
build="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/kiln-compile bin/kiln-run bin/kiln-launch include/kiln/runtime.h \
         lib/cmake/kiln/kilnConfig.cmake; do
  if [ ! -e "$prefix/$f" ]; then
    echo "check_install: the install has no $f" >&2
    exit 1
  fi
done

# The Python packages go into wheels (tools/build-wheels.sh), not into the
# prefix's root.
for f in kiln kiln_runtime; do
  if [ -e "$prefix/$f" ]; then
    echo "check_install: the install has a wheel's $f/ at its root" >&2
    exit 1
  fi
done

# The MPI and Gloo plug-ins, where the build has them (OpenMPI, Gloo were
# found), go where the installed kiln-run looks for them: bin/../lib/kiln/.
for plugin in lib/kiln/libkiln_comm_mpi.so lib/kiln/libkiln_comm_gloo.so; do
  if [ -e "$build/$plugin" ] && [ ! -e "$prefix/$plugin" ]; then
    echo "check_install: the install has no $plugin" >&2
    exit 1
  fi
done

"$prefix/bin/kiln-compile" "$src/examples/models/newton_sqrt.mlir" \
  -o "$work/newton.kmod"

# kiln's archives are installed beside the plug-ins, and a moved copy of the
# install finds them there.
for archive in "$build"/lib/kiln/libkiln_*.a; do
  if [ ! -e "$prefix/lib/kiln/$(basename "$archive")" ]; then
    echo "check_install: the install has no lib/kiln/$(basename "$archive")" >&2
    exit 1
  fi
done
# Outside the build tree (WORK_DIR is inside it), where nothing may fall
# back to the build tree's files.
outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT
moved="$outside/kiln"
cp -a "$prefix" "$moved"
model="$src/test/install/Inputs/library_calls.mlir"
"$build/bin/kiln-compile" "$model" -o "$work/calls-build.kmod"
"$moved/bin/kiln-compile" "$model" -o "$work/calls-moved.kmod"
expected=$("$build/bin/kiln-run" "$work/calls-build.kmod" --input 0.5)
got=$("$moved/bin/kiln-run" "$work/calls-moved.kmod" --input 0.5)
if [ "$got" != "$expected" ]; then
  echo "check_install: the moved install computes '$got', the build '$expected'" >&2
  exit 1
fi
rm "$moved/lib/kiln/libkiln_attention.a"
if "$moved/bin/kiln-compile" "$model" -o "$work/calls-missing.kmod" \
     2>"$work/missing.log"; then
  echo "check_install: the moved install compiled without its archive" >&2
  exit 1
fi
if ! grep -q "libkiln_attention.a is not installed where this kiln looks" \
     "$work/missing.log"; then
  echo "check_install: no clear error without the archive:" >&2
  cat "$work/missing.log" >&2
  exit 1
fi
# KILN_SUPPORT_DIR names another directory that holds the archives.
KILN_SUPPORT_DIR="$prefix/lib/kiln" "$moved/bin/kiln-compile" "$model" \
  -o "$work/calls-support-dir.kmod"

# Only the prefix is searched: nothing of the source or build tree.
cmake -G Ninja -S "$src/test/install" -B "$work/consumer" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/configure.log"
cmake --build "$work/consumer" -j "${KILN_JOBS:-2}" >"$work/build.log" || {
  cat "$work/build.log" >&2
  exit 1
}

"$work/consumer/runtime_host" "$work/newton.kmod"
"$work/consumer/jit_host"
"$work/consumer/onnx_host" "$src/examples/onnx/fixed_point.onnx"

# The runtime-only host carries no LLVM or MLIR code.
if nm -C "$work/consumer/runtime_host" | grep -q -E 'mlir::|llvm::'; then
  echo "check_install: runtime_host links LLVM/MLIR code" >&2
  exit 1
fi
echo "check_install: ok"
