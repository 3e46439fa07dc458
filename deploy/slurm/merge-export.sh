#!/bin/bash
# Runs once every shard of tune-shards.sh succeeded: merges the shard DBs on local disk and
# publishes fleet.db (every winner) and deploy/mmtune.db (the compact file to ship).
#SBATCH --job-name=mmtune-merge
#SBATCH --ntasks=1
#SBATCH --time=00:10:00
#SBATCH --output=mmtune-merge-%j.log
set -euo pipefail

results="${MMTUNE_RESULTS:-/shared/mmtune}"
work="${TMPDIR:-/tmp}/mmtune-merge-${SLURM_JOB_ID}"
mkdir -p "$work" "$results/deploy"
cp "$results"/shards/tune-*.db "$work/"

# A fleet.db from earlier arrays (other machine types) takes part, so types add up.
if [[ -f "$results/fleet.db" ]]; then cp "$results/fleet.db" "$work/fleet.db"; fi
mmtune merge --out "$work/fleet.db" "$work"/tune-*.db
mmtune export --db "$work/fleet.db" --out "$work/mmtune.db" --machine all

cp "$work/fleet.db" "$results/.fleet.db.part"
mv "$results/.fleet.db.part" "$results/fleet.db"
cp "$work/mmtune.db" "$results/deploy/.mmtune.db.part"
mv "$results/deploy/.mmtune.db.part" "$results/deploy/mmtune.db"
rm -rf "$work"
