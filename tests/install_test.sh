#!/bin/sh
# `cmake --install` into a fresh prefix, then what an application developer does with it: the
# three examples built out of tree against the prefix (C through pkg-config, C++ and a BLAS
# program through find_package) and run; the Python package imported from the prefix, finding
# the library and the CLI by itself; the libraries' sonames and their exported symbols
# (only the public API); the installed CLI and the package files.
#   install_test.sh BUILD_DIR SOURCE_DIR C_COMPILER [PYTHON]
set -eu
build=$1
source=$2
cc=$3
python=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$work/install.log" || {
  cat "$work/install.log" >&2; fail "cmake --install failed"; }
libdir=$(cd "$prefix" && ls -d lib lib64 lib/*-linux-gnu 2>/dev/null | while read -r d; do
  [ -e "$prefix/$d/libmmtune.so" ] && echo "$d"; done | head -n 1)
[ -n "$libdir" ] || fail "no libmmtune.so under $prefix"

# The CLI, headers, package files and docs are where users look for them.
"$prefix/bin/mmtune" --version > /dev/null || fail "installed mmtune does not run"
for f in include/mmtune/mmtune.h include/mmtune/runtime.h "$libdir/pkgconfig/mmtune.pc" \
         "$libdir/pkgconfig/mmtune-blas.pc" "$libdir/cmake/mmtune/mmtuneConfig.cmake" \
         "$libdir/cmake/mmtune/mmtuneConfigVersion.cmake" share/doc/mmtune/README.md \
         share/doc/mmtune/examples/c/gemm.c share/doc/mmtune/deploy/kubernetes/tune-job.yaml; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done
# A man page for the CLI and for every subcommand its --help lists.
commands=$("$prefix/bin/mmtune" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ -n "$commands" ] || fail "no subcommands in mmtune --help"
for page in mmtune $(for c in $commands; do echo "mmtune-$c"; done); do
  grep -q '^\.SH SYNOPSIS' "$prefix/share/man/man1/$page.1" 2>/dev/null ||
    fail "no man page $page(1)"
done
[ -x "$prefix/share/doc/mmtune/deploy/slurm/tune-shards.sh" ] ||
  fail "the installed Slurm job script is not executable"

# Sonames carry the major version; only the public API is exported.
for lib in libmmtune libmmtune_blas; do
  soname=$(readelf -d "$prefix/$libdir/$lib.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  case "$soname" in
    "$lib".so.[0-9]*) ;;
    *) fail "$lib.so has soname '$soname', expected $lib.so.MAJOR" ;;
  esac
  [ -e "$prefix/$libdir/$soname" ] || fail "$soname is not installed"
done
leaked=$(nm -D --defined-only "$prefix/$libdir/libmmtune.so" | awk '{print $3}' | c++filt |
  grep -v -e '^mmtune_' -e '^mmtune::' -e '^_init$' -e '^_fini$' || true)
[ -z "$leaked" ] || fail "libmmtune.so exports non-API symbols: $(echo "$leaked" | head -n 3)"
internal=$(nm -D --defined-only "$prefix/$libdir/libmmtune.so" | awk '{print $3}' | c++filt |
  grep -e '^mmtune::detail' -e '^mmtune::GemmPlan' -e '^mmtune::TuningStore' || true)
[ -z "$internal" ] || fail "libmmtune.so exports internals: $(echo "$internal" | head -n 3)"

export LD_LIBRARY_PATH="$prefix/$libdir"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"

# C through pkg-config.
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Werror "$source/examples/c/gemm.c" $(pkg-config --cflags --libs mmtune) \
  -lm -o "$work/c_gemm" || fail "the C example does not build against the prefix"
"$work/c_gemm" | grep -q "matches the reference" || fail "the C example failed"

# C++ and the BLAS program through find_package.
for example in cpp blas; do
  cmake -S "$source/examples/$example" -B "$work/$example" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release > "$work/$example.log" 2>&1 &&
    cmake --build "$work/$example" >> "$work/$example.log" 2>&1 ||
    { cat "$work/$example.log" >&2; fail "the $example example does not build"; }
done
"$work/cpp/gemm" | grep -q "matches the reference" || fail "the C++ example failed"
"$work/blas/sgemm" | grep -q "matches the reference" || fail "the BLAS example failed"

# Python: the installed package finds libmmtune.so and the CLI relative to itself.
if [ -n "$python" ] && "$python" -c "import numpy" 2>/dev/null; then
  site="$prefix/lib/python3/dist-packages"
  [ -e "$site/mmtune/__init__.py" ] || fail "the Python package is not in $site"
  env -u LD_LIBRARY_PATH -u MMTUNE_LIBRARY -u MMTUNE_CLI PYTHONPATH="$site" "$python" -c '
import numpy as np, mmtune, mmtune._library as lib
a = np.arange(12, dtype=np.float32).reshape(3, 4)
with mmtune.Runtime() as rt:
    assert np.array_equal(rt.matmul(a, a.T), a @ a.T)
assert lib.cli_path().startswith("'"$prefix"'"), lib.cli_path()
' || fail "the installed Python package does not work"
fi
echo "install_test: prefix, examples, sonames and exports are right"
