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
if [[ -z $arch ]]; then
  cd "$build_dir"
  exec ctest --output-on-failure --parallel "$(nproc)" --timeout 600
fi

scripts/binfmt_qemu.sh "$arch"
cd "$build_dir"
# Every feature qemu emulates (dot product, bf16, i8mm, SVE), so that every kernel level runs.
# The tune and bench CLI tests time candidates for seconds each: 8 of the 10 minutes the suite
# takes under qemu, for timings that mean nothing there (docs/arm.md).
QEMU_CPU=max ctest --output-on-failure --parallel "$(nproc)" --timeout 600 \
  --exclude-regex '^(TuneCliTest|BenchCliTest)[.]'
# The kernels again on CPUs with less: the dot product without i8mm and bf16 (the SDOT s8
# kernels), then NEON alone (the widening kernels as the machine's level).
kernel_tests='^(GemmTest|GemmEdgeTest|GemmBatchTest|LowpGemmTest|MicroKernelTest|PackedBTest|'
kernel_tests+='EpilogueGemmTest|LowpEpilogueKernelTest|DequantizeGemmTest|RegistryTest|'
kernel_tests+='PeakKernelsTest|DefaultConfigTest|CandidateRunnerTest|BlasShimTest|RuntimeTest)[.]'
for cpu in neoverse-n1 cortex-a57; do
  echo "test.sh: kernel tests with QEMU_CPU=$cpu"
  QEMU_CPU=$cpu ctest --output-on-failure --parallel "$(nproc)" --timeout 600 \
    --tests-regex "$kernel_tests"
done
