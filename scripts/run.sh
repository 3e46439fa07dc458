#!/usr/bin/env bash
# The main job in one command: set up, build, describe this machine and measure its peaks.
# (Until `mmtune tune` lands, the main job is `mmtune info --measure`; see README.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
./build/mmtune info --measure
