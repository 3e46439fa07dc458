#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite under ctest.
#
#   scripts/test.sh             Release build in build/
#   scripts/test.sh --sanitize  ASan + UBSan build in build-asan/
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Chromium renders the HTML report in its test; Slurm and munge run the fleet-tuning test.
setup_args=(--with-browser --with-fleet)
build_dir=build
case "${1:-}" in
  "") ;;
  --sanitize) setup_args+=(--sanitize); build_dir=build-asan ;;
  *) echo "test.sh: error: unknown option '$1' (expected --sanitize)" >&2; exit 2 ;;
esac

scripts/setup.sh "${setup_args[@]}"
cd "$build_dir"
ctest --output-on-failure --parallel "$(nproc)" --timeout 600
