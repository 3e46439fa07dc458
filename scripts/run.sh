#!/usr/bin/env bash
# The main job in one command: set up, build, describe this machine, then tune the default shape
# set (`--preset quick`) into mmtune.db. Extra arguments go to `mmtune tune` (e.g. --preset
# bert-base --budget 60). Re-running resumes: measured candidates are not re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
./build/mmtune info
./build/mmtune tune --db mmtune.db "$@"
