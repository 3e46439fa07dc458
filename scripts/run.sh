#!/usr/bin/env bash
# The main job in one command: set up, build, describe this machine, tune the default shape set
# (`--preset quick`) into mmtune.db, then write its report (mmtune-report.html, one self-contained
# page, and mmtune-report.json). Extra arguments go to `mmtune tune` (e.g. --preset bert-base
# --budget 60). Re-running resumes: measured candidates are not re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
./build/mmtune info
./build/mmtune tune --db mmtune.db "$@"
./build/mmtune report --db mmtune.db --html mmtune-report.html --json mmtune-report.json
