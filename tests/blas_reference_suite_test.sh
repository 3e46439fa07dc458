#!/bin/sh
# The reference BLAS level-3 test programs of Debian's libblas-test (Fortran xblat3s/xblat3d and
# CBLAS xscblat3/xdcblat3, GEMM only, both layouts, error exits included) with libmmtune_blas.so
# preloaded in front of the reference BLAS (Debian's libblas3, which the CBLAS programs need:
# they share its RowMajorStrg). The sizes run past the kernels' tiles (N up to
# 65, the programs' limit). MMTUNE_RECORD proves that mmtune computed the GEMMs.
# Usage: blas_reference_suite_test.sh LIBMMTUNE_BLAS [PROGRAM_DIR]; exit 77 (skip) without them.
set -eu
library=$1
programs=${2:-/usr/lib/x86_64-linux-gnu/blas}
for program in xblat3s xblat3d xscblat3 xdcblat3; do
  if [ ! -x "$programs/$program" ]; then
    echo "SKIP: $programs/$program not found (Debian package libblas-test)"
    exit 77
  fi
done
# The reference library beside the programs, whichever BLAS the system's alternatives select.
reference_path=""
[ -e "$programs/libblas.so.3" ] && reference_path=$programs
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

sizes='9                 NUMBER OF VALUES OF N
0 1 2 3 5 9 17 33 65  VALUES OF N
3                 NUMBER OF VALUES OF ALPHA
0.0 1.0 0.7       VALUES OF ALPHA
3                 NUMBER OF VALUES OF BETA
0.0 1.0 1.3       VALUES OF BETA'

# Fortran: the summary goes to the file blat3.out (Debian's programs open it even for unit 6);
# only xGEMM is tested.
fortran_input() {
  cat <<END
'blat3.out'       NAME OF SUMMARY OUTPUT FILE
6                 UNIT NUMBER OF SUMMARY FILE
'BLAT3.SNAP'      NAME OF SNAPSHOT OUTPUT FILE
-1                UNIT NUMBER OF SNAPSHOT FILE (NOT USED IF .LT. 0)
F        LOGICAL FLAG, T TO REWIND SNAPSHOT FILE AFTER EACH RECORD.
F        LOGICAL FLAG, T TO STOP ON FAILURES.
T        LOGICAL FLAG, T TO TEST ERROR EXITS.
16.0     THRESHOLD VALUE OF TEST RATIO
$sizes
${1}GEMM  T PUT F FOR NO TEST. SAME COLUMNS.
${1}SYMM  F PUT F FOR NO TEST. SAME COLUMNS.
${1}TRMM  F PUT F FOR NO TEST. SAME COLUMNS.
${1}TRSM  F PUT F FOR NO TEST. SAME COLUMNS.
${1}SYRK  F PUT F FOR NO TEST. SAME COLUMNS.
${1}SYR2K F PUT F FOR NO TEST. SAME COLUMNS.
END
}

# CBLAS: column-major and row-major (2), only cblas_xgemm.
cblas_input() {
  cat <<END
'CBLAT3.SNAP'     NAME OF SNAPSHOT OUTPUT FILE
-1                UNIT NUMBER OF SNAPSHOT FILE (NOT USED IF .LT. 0)
F        LOGICAL FLAG, T TO REWIND SNAPSHOT FILE AFTER EACH RECORD.
F        LOGICAL FLAG, T TO STOP ON FAILURES.
T        LOGICAL FLAG, T TO TEST ERROR EXITS.
2        0 TO TEST COLUMN-MAJOR, 1 TO TEST ROW-MAJOR, 2 TO TEST BOTH
16.0     THRESHOLD VALUE OF TEST RATIO
$sizes
cblas_${1}gemm  T PUT F FOR NO TEST. SAME COLUMNS.
cblas_${1}symm  F PUT F FOR NO TEST. SAME COLUMNS.
cblas_${1}trmm  F PUT F FOR NO TEST. SAME COLUMNS.
cblas_${1}trsm  F PUT F FOR NO TEST. SAME COLUMNS.
cblas_${1}syrk  F PUT F FOR NO TEST. SAME COLUMNS.
cblas_${1}syr2k F PUT F FOR NO TEST. SAME COLUMNS.
END
}

# Runs one program on its input (standard input) in $dir and checks its verdicts: the error
# exits and the computations passed (`passes` verdicts: one per layout), nothing failed, and
# mmtune recorded a 65-row GEMM.
run() {
  program=$1
  input=$2
  name=$3
  passes=$4
  record="$dir/$program.json"
  out="$dir/$program.out"
  (cd "$dir" && printf '%s\n' "$input" |
    LD_LIBRARY_PATH="$reference_path" LD_PRELOAD="$library" MMTUNE_RECORD="$record" \
      "$programs/$program" >"$out" 2>&1) ||
    { cat "$out"; fail "$program exited with an error"; }
  if [ -f "$dir/blat3.out" ]; then
    cat "$dir/blat3.out" >>"$out"
    rm "$dir/blat3.out"
  fi
  if grep -Eiq 'FAIL|FATAL|SUSPECT|NOT DETECTED|INSTEAD OF' "$out"; then
    cat "$out"; fail "$program reported failures"
  fi
  grep -q "$name *PASSED THE TESTS OF ERROR-EXITS" "$out" ||
    { cat "$out"; fail "$program: the error exits of $name did not pass"; }
  [ "$(grep -c "$name *PASSED THE .*COMPUTATIONAL TESTS" "$out")" = "$passes" ] ||
    { cat "$out"; fail "$program: the computations of $name did not pass"; }
  grep -q '"m": 65' "$record" || fail "$program: the GEMMs did not go through mmtune"
  echo "$program: $(grep -c 'PASSED' "$out") PASSED lines"
}

run xblat3s "$(fortran_input S)" SGEMM 1
run xblat3d "$(fortran_input D)" DGEMM 1
run xscblat3 "$(cblas_input s)" cblas_sgemm 2
run xdcblat3 "$(cblas_input d)" cblas_dgemm 2
echo "PASS"
