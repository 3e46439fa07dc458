#!/bin/sh
# The Debian package as a user gets it: built with cpack, installed with dpkg -i (its Depends met
# by the packages the build used), used (the CLI, the C example built with pkg-config and run
# without LD_LIBRARY_PATH), then removed with dpkg -r, leaving none of its files. Needs root and
# a machine where no mmtune package is installed: skipped (77) otherwise.
#   deb_test.sh BUILD_DIR SOURCE_DIR C_COMPILER
set -eu
build=$1
source=$2
cc=$3

if [ "$(id -u)" -ne 0 ] || ! command -v dpkg > /dev/null; then
  echo "deb_test: skipped: installing a package needs root and dpkg"
  exit 77
fi
if dpkg-query -W -f='${Status}' mmtune 2>/dev/null | grep -q "install ok installed"; then
  echo "deb_test: skipped: an mmtune package is installed already; it is left alone"
  exit 77
fi

work=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then dpkg -r mmtune > /dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "deb_test: $*" >&2; exit 1; }

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/mmtune_*.deb)
dpkg-deb -f "$deb" Depends | grep -q libhwloc15 || fail "Depends lacks libhwloc15"
dpkg-deb -f "$deb" Depends | grep -q libsqlite3-0 || fail "Depends lacks libsqlite3-0"

dpkg -i "$deb" > "$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log" >&2; fail "dpkg -i failed"; }
installed=1
files=$(dpkg -L mmtune)
/usr/bin/mmtune --version > /dev/null || fail "the installed mmtune does not run"
/usr/bin/mmtune info > /dev/null || fail "mmtune info failed"
# shellcheck disable=SC2046
"$cc" -std=c11 "$source/examples/c/gemm.c" $(pkg-config --cflags --libs mmtune) -lm \
  -o "$work/c_gemm" || fail "the C example does not build against the package"
"$work/c_gemm" | grep -q "matches the reference" || fail "the C example failed"

dpkg -r mmtune > "$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log" >&2; fail "dpkg -r failed"; }
installed=0
for f in $files; do
  [ -d "$f" ] && continue
  [ -e "$f" ] && fail "dpkg -r left $f behind"
done
echo "deb_test: built, installed, used and removed $(basename "$deb")"
