#!/bin/sh
# The micro-kernels must be single functions: every lambda and Unroll step inlined into them
# ([[gnu::flatten]]). An out-of-line helper means accumulators passed through memory, which makes
# the larger AVX-512 tiles several times slower (GCC 12 does this). Fails listing the helpers
# it finds.
#   kernels_inlined_test.sh NM LIBMMTUNE_KERNELS.a
set -eu
nm_tool=$1
library=$2
symbols=$("$nm_tool" -C --defined-only "$library") || { echo "cannot read $library" >&2; exit 1; }
count=$(printf '%s\n' "$symbols" | grep -c 'MicroKernel') || true
if [ "$count" -eq 0 ]; then
  echo "no micro-kernel symbols in $library: the check would be vacuous" >&2
  exit 1
fi
helpers=$(printf '%s\n' "$symbols" | grep -E 'ukernel::.*(\{lambda|simd::Unroll)' || true)
if [ -n "$helpers" ]; then
  echo "out-of-line helpers in the micro-kernels:" >&2
  printf '%s\n' "$helpers" | head -20 >&2
  exit 1
fi
echo "ok: $count micro-kernel symbols, no out-of-line helpers"
