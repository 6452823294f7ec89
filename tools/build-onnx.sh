#!/usr/bin/env bash
# Builds the ONNX C++ library (protobuf classes, operator schemas, checker,
# shape inference) of a pinned upstream release, once, into a cached
# prefix, and prints that prefix. kiln's importer needs the operator
# schemas of the IR versions and opsets current exporters write; Debian 12
# ships ONNX 1.12 (IR 8, opset 17).
#
#   tools/build-onnx.sh        # prints the prefix, building it if missing
#
# The source is the release's source distribution on PyPI, checked against
# its SHA-256 before it is unpacked. It is built with Debian's protobuf
# (protoc and libprotobuf 3.21), ONNX_ML on and the namespace `onnx`, as
# Debian's own package is, static and position independent. The prefix is
# $KILN_DEPS_DIR/onnx-VERSION (KILN_DEPS_DIR defaults to
# ~/.cache/kiln); delete it to rebuild.
set -euo pipefail

version=1.23.2
sha256=008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8
url=https://files.pythonhosted.org/packages/3f/62/bc2dfadb63ecf04cb2d65a6b17751863039d36c65de51d6a3128ab35f1e7/onnx-$version.tar.gz

deps="${KILN_DEPS_DIR:-$HOME/.cache/kiln}"
prefix="$deps/onnx-$version"
if [ -f "$prefix/lib/cmake/ONNX/ONNXConfig.cmake" ]; then
  echo "$prefix"
  exit 0
fi

mkdir -p "$deps"
work="$(mktemp -d "$deps/onnx-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tarball="$deps/onnx-$version.tar.gz"
if [ ! -f "$tarball" ] || ! echo "$sha256  $tarball" | sha256sum -c --quiet - 2>/dev/null; then
  echo "build-onnx: downloading ONNX $version" >&2
  curl -fsSL --retry 3 -o "$tarball.part" "$url"
  mv "$tarball.part" "$tarball"
fi
if ! echo "$sha256  $tarball" | sha256sum -c --quiet -; then
  echo "build-onnx: $tarball does not have the SHA-256 of ONNX $version; removed" >&2
  rm -f "$tarball"
  exit 1
fi
tar -xzf "$tarball" -C "$work"
src="$work/onnx-$version"
# The release asks for CMake 3.26 but uses nothing beyond Debian 12's 3.25.
sed -i 's/^cmake_minimum_required(VERSION 3\.26)/cmake_minimum_required(VERSION 3.25)/' \
  "$src/CMakeLists.txt"
echo "build-onnx: building ONNX $version into $prefix" >&2
cmake -G Ninja -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DONNX_ML=ON -DONNX_NAMESPACE=onnx -DONNX_BUILD_PYTHON=OFF \
  -DONNX_BUILD_TESTS=OFF -DONNX_USE_PROTOBUF_SHARED_LIBS=ON \
  -DONNX_GEN_PB_TYPE_STUBS=OFF -DProtobuf_PROTOC_EXECUTABLE=/usr/bin/protoc >&2
cmake --build "$work/build" -j "${KILN_JOBS:-2}" >&2
cmake --install "$work/build" >&2
echo "$prefix"
