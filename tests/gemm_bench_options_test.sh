#!/bin/sh
# gemm_bench's own options: a malformed --mmtune_* value is one "gemm_bench: error:" line on
# stderr and exit status 2, before any benchmark runs; good values name the series they ask for.
#   gemm_bench_options_test.sh GEMM_BENCH
set -u
bench=$1
failures=0
list() { "$bench" --mmtune_shapes=8x8x8 --mmtune_sweep=none --benchmark_list_tests "$@"; }

expect_error() {
  err=$(list "$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | wc -l)
  case "$err" in
    "gemm_bench: error: "*) prefix_ok=1 ;;
    *) prefix_ok=0 ;;
  esac
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || [ "$prefix_ok" -ne 1 ]; then
    echo "FAIL: $* gave exit $rc and stderr:" >&2
    printf '%s\n' "$err" >&2
    failures=$((failures + 1))
  fi
}

expect_series() {
  pattern=$1
  shift
  out=$(list "$@" 2>/dev/null)
  rc=$?
  if [ "$rc" -ne 0 ] || ! printf '%s\n' "$out" | grep -q "$pattern"; then
    echo "FAIL: $* gave exit $rc and no series matching '$pattern'" >&2
    failures=$((failures + 1))
  fi
}

for threads in x '' 0 -1 1, 1,,2 '1;2' 2000 1.5; do
  expect_error "--mmtune_threads=$threads"
done
expect_error --mmtune_dtypes=
expect_error --mmtune_dtypes=f16
expect_error --mmtune_dtypes=bf16
expect_error --mmtune_dtypes=f32,s8
expect_error '--mmtune_configs=packed avx9 6x16'
expect_error --mmtune_shapes=8x8

expect_series '^f32/t1/8x8x8/mmtune_default' --mmtune_threads=1,2
expect_series '^f32/t2/8x8x8/mmtune_default' --mmtune_threads=1,2
expect_series '^f64/t1/8x8x8/mmtune_default' --mmtune_dtypes=f64

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "ok: bad options rejected with one line and exit 2; good ones list their series"
