#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite under ctest.
#
#   scripts/test.sh                 Release build in build/
#   scripts/test.sh --sanitize      ASan + UBSan build in build-asan/
#   scripts/test.sh --arch aarch64  cross build for 64-bit ARM in build-aarch64/, its tests run
#                                   under qemu-user (docs/arm.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Chromium renders the HTML report in its test; Slurm and munge run the fleet-tuning test.
setup_args=(--with-browser --with-fleet)
build_dir=build
arch=""
case "${1:-}" in
  "") ;;
  --sanitize) setup_args+=(--sanitize); build_dir=build-asan ;;
  --arch)  # setup.sh refuses an architecture it cannot build for
    arch="${2:-}"
    setup_args=(--arch "$arch"); build_dir=build-$arch ;;
  *)
    echo "test.sh: error: unknown option '$1' (expected --sanitize or --arch aarch64)" >&2
    exit 2 ;;
esac

scripts/setup.sh "${setup_args[@]}"
ctest_args=()
if [[ -n $arch ]]; then
  scripts/binfmt_qemu.sh "$arch"
  # Every feature qemu emulates (dot product, bf16, i8mm, SVE), so that every kernel runs.
  export QEMU_CPU=max
  # The tune and bench CLI tests time candidates for seconds each: 8 of the 10 minutes the suite
  # takes under qemu, for timings that mean nothing there (docs/arm.md).
  ctest_args=(--exclude-regex '^(TuneCliTest|BenchCliTest)[.]')
fi
cd "$build_dir"
ctest --output-on-failure --parallel "$(nproc)" --timeout 600 "${ctest_args[@]}"
