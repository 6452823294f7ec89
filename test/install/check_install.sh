#!/usr/bin/env bash
# check_install.sh SOURCE_ROOT BUILD_DIR WORK_DIR
#
# Installs the kiln build in BUILD_DIR into WORK_DIR/prefix, then builds the
# project in test/install (which knows nothing of kiln's tree) against that
# prefix with find_package(kiln), compiles examples/models/newton_sqrt.mlir
# with the installed kiln-compile and runs both hosts: the C host linking
# kiln::runtime, and the C++ host linking kiln::jit.
set -euo pipefail

src="$1"
build="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/kiln-compile bin/kiln-run include/kiln/runtime.h \
         lib/cmake/kiln/kilnConfig.cmake; do
  if [ ! -e "$prefix/$f" ]; then
    echo "check_install: the install has no $f" >&2
    exit 1
  fi
done

# The MPI plug-in, where the build has one (OpenMPI was found), goes where
# the installed kiln-run looks for it: bin/../lib/kiln/.
plugin=lib/kiln/libkiln_comm_mpi.so
if [ -e "$build/$plugin" ] && [ ! -e "$prefix/$plugin" ]; then
  echo "check_install: the install has no $plugin" >&2
  exit 1
fi

"$prefix/bin/kiln-compile" "$src/examples/models/newton_sqrt.mlir" \
  -o "$work/newton.kmod"

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

# The runtime-only host carries no LLVM or MLIR code.
if nm -C "$work/consumer/runtime_host" | grep -q -E 'mlir::|llvm::'; then
  echo "check_install: runtime_host links LLVM/MLIR code" >&2
  exit 1
fi
echo "check_install: ok"
