#!/bin/sh
# check_mpi_linkage.sh without|with FILE: fails unless FILE's shared library
# dependencies (ldd) leave out, or include, libmpi.
mode=$1
file=$2
deps=$(ldd "$file") || { echo "ldd failed on $file"; exit 1; }
printf '%s\n' "$deps"
if printf '%s\n' "$deps" | grep -qi 'libmpi'; then found=1; else found=0; fi
case "$mode" in
  without) [ "$found" = 0 ] || { echo "error: $file links libmpi"; exit 1; } ;;
  with) [ "$found" = 1 ] || { echo "error: $file does not link libmpi"; exit 1; } ;;
  *) echo "usage: check_mpi_linkage.sh without|with FILE"; exit 2 ;;
esac
