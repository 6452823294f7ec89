#!/bin/sh
# Compiles one e2e program with --target=cuda for sm_80 and sm_90 and
# assembles each PTX with ptxas. Programs listed in cuda_exclusions.txt must
# fail to compile for CUDA; one that starts working fails the test so that
# the list stays true.
#
# usage: cuda_ptxas_check.sh KILN_COMPILE PTXAS PROGRAM.mlir EXCLUSIONS WORKDIR
# Exits 77 (ctest SKIP_RETURN_CODE) when ptxas was not found at configure time.
set -u
compile=$1 ptxas=$2 program=$3 exclusions=$4 work=$5
name=$(basename "$program" .mlir)
if [ -z "$ptxas" ] || [ ! -x "$ptxas" ]; then
  echo "SKIP: ptxas not found (install the CUDA toolkit; looked in /usr/local/cuda/bin)"
  exit 77
fi
mkdir -p "$work"
excluded=$(grep -E "^$name[[:space:]]*:" "$exclusions" | sed 's/^[^:]*:[[:space:]]*//')
status=0
for arch in sm_80 sm_90; do
  ptx="$work/$name.$arch.ptx"
  if ! "$compile" "$program" --target=cuda --cuda-arch=$arch --emit=ptx -o "$ptx" 2>"$work/$name.$arch.log"; then
    if [ -n "$excluded" ]; then
      echo "excluded, as expected: $name ($arch): $excluded"
      continue
    fi
    echo "FAIL: kiln-compile --target=cuda --cuda-arch=$arch $program"
    cat "$work/$name.$arch.log"
    status=1
    continue
  fi
  if [ -n "$excluded" ]; then
    echo "FAIL: $name is listed in $exclusions ($excluded) but now compiles for CUDA; remove it from the list"
    status=1
    continue
  fi
  if ! grep -q "^\.target $arch" "$ptx"; then
    echo "FAIL: $ptx is not PTX for $arch"
    status=1
    continue
  fi
  if ! "$ptxas" -arch=$arch "$ptx" -o "$work/$name.$arch.cubin"; then
    echo "FAIL: ptxas -arch=$arch rejects the PTX of $name"
    status=1
    continue
  fi
  kernels=$(grep -c "^\.visible \.entry" "$ptx")
  echo "ok: $name $arch: $kernels kernels, ptxas clean"
done
exit $status
