#!/bin/bash
# One array task per node tunes one shard of the shape list; submit it once per machine type
# (`sbatch --constraint=FEATURE`), then merge-export.sh with --dependency=afterok on the array.
# The shard count N is the array's task count, so --array=0-7 splits the list 8 ways.
#SBATCH --job-name=mmtune-tune
#SBATCH --array=0-7
#SBATCH --nodes=1
#SBATCH --exclusive                 # nothing else runs on the node while it is timed
#SBATCH --time=02:00:00
#SBATCH --output=mmtune-tune-%A_%a.log
set -euo pipefail

# Where finished shard DBs are published: storage every node and the merge job can read.
results="${MMTUNE_RESULTS:-/shared/mmtune}/shards"
# What to tune; every shard must get the same list (the split is computed from it).
read -ra tune_args <<< "${MMTUNE_TUNE_ARGS:---preset llama-7b --threads all --budget 60}"

shard="${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"
# SQLite wants node-local disk while it writes (its WAL needs working locks and shared memory).
scratch="${TMPDIR:-/tmp}/mmtune-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}"
mkdir -p "$scratch" "$results"

# A re-queued task resumes from its scratch DB when the node kept it.
mmtune tune --db "$scratch/tune.db" "${tune_args[@]}" --shard "$shard"

# Publish atomically: the merge must never see a half-copied file.
part="$results/.tune-${SLURM_ARRAY_TASK_ID}.db.part"
cp "$scratch/tune.db" "$part"
mv "$part" "$results/tune-${SLURM_ARRAY_TASK_ID}.db"
rm -rf "$scratch"
