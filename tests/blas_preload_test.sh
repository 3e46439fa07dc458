#!/bin/sh
# libmmtune_blas.so in both deployment modes, with a real C program (blas_client.c):
#   1. linked in place of a BLAS;
#   2. LD_PRELOADed in front of the system OpenBLAS the program was linked with.
# The record file (MMTUNE_RECORD) proves which library computed: mmtune writes it, OpenBLAS does
# not, and the control run without the preload must leave no record.
# Usage: blas_preload_test.sh CLIENT_LINKED_TO_MMTUNE CLIENT_LINKED_TO_OPENBLAS LIBMMTUNE_BLAS
set -eu
linked=$1
openblas_client=$2
library=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

MMTUNE_RECORD="$dir/linked.json" "$linked" || fail "linked client computed wrong results"
grep -q '"m": 67' "$dir/linked.json" || fail "linked client: mmtune recorded nothing"

if [ -n "$openblas_client" ]; then
  MMTUNE_RECORD="$dir/control.json" "$openblas_client" || fail "OpenBLAS client failed on its own"
  [ ! -e "$dir/control.json" ] || fail "control run without LD_PRELOAD went through mmtune"
  LD_PRELOAD="$library" MMTUNE_RECORD="$dir/preloaded.json" "$openblas_client" \
    || fail "preloaded client computed wrong results"
  grep -q '"m": 67' "$dir/preloaded.json" || fail "LD_PRELOAD did not route GEMMs to mmtune"
  grep -q '"dtype": "f64"' "$dir/preloaded.json" || fail "cblas_dgemm was not intercepted"
else
  echo "no OpenBLAS found at configure time: only the linked mode was tested"
fi
echo "PASS"
