#!/bin/bash
# Runs the documented fleet tune (deploy/slurm/) on a single-node Slurm cluster started here:
# a private munged, slurmctld and slurmd, all on this machine with their state in a temporary
# directory, torn down afterwards. Eight shards of a three-shape list, so five shards get nothing
# to do and must still succeed for the dependent merge to run; the merged DB and the export must
# hold every shape's winner. Skipped (77) unless run as root with slurm-wlm and munge installed
# (scripts/setup.sh installs them).
#   slurm_test.sh MMTUNE_CLI SOURCE_DIR
set -euo pipefail
mmtune=$(readlink -f "$1")
source_dir=$(readlink -f "$2")

skip() { echo "slurm_test: skipped: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root"
for tool in munged slurmctld slurmd sbatch scontrol sinfo; do
  command -v "$tool" > /dev/null || skip "$tool is not installed (apt-get install slurm-wlm munge)"
done

work=$(mktemp -d /tmp/mmtune-slurm-XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null || true; done
  if [[ $status -ne 0 ]]; then
    for log in "$work"/log/*.log "$work"/submit/*.log; do
      [[ -f $log ]] && { echo "---- $log"; tail -n 30 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "slurm_test: FAILED: $*" >&2; exit 1; }

mkdir -p "$work"/{munge,log,state,spool,submit,results,bin}
chmod 700 "$work/munge"

# munge, on its own socket and key, so a munged the host may run is left alone.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --foreground --force --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
  --seed-file="$work/munge/seed" > /dev/null 2>&1 &
pids+=($!)

# Free TCP ports for the two daemons (the kernel picks them; a race is very unlikely).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
host=$(hostname -s)
cpus=$(nproc)
export SLURM_CONF="$work/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=mmtune-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

for _ in $(seq 50); do [[ -S $work/munge/socket ]] && break; sleep 0.1; done
[[ -S $work/munge/socket ]] || fail "munged did not start"
slurmctld -D -i > "$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D > "$work/log/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 120); do
  state=$(sinfo -h -n "$host" -o %T 2> /dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.5
done
[[ $state == idle ]] || fail "the node did not become idle (state '$state')"

# The documented scripts, unchanged; what to tune and where to publish come from the
# environment, which sbatch passes on (--export=ALL is its default).
ln -s "$mmtune" "$work/bin/mmtune"
shapes=64x64x64,48x80x32,96x96x96
export PATH="$work/bin:$PATH" TMPDIR="$work/spool" MMTUNE_RESULTS="$work/results"
export MMTUNE_TUNE_ARGS="--shapes $shapes --threads 1 --strategy model --budget 0"
cd "$work/submit"
array=$(sbatch --parsable "$source_dir/deploy/slurm/tune-shards.sh")
merge=$(sbatch --parsable --dependency=afterok:"$array" "$source_dir/deploy/slurm/merge-export.sh")
echo "slurm_test: array job $array, merge job $merge"

job_state() { scontrol show job "$1" 2> /dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1; }
for _ in $(seq 600); do
  case $(job_state "$merge") in
    JobState=COMPLETED|JobState=FAILED|JobState=CANCELLED|JobState=TIMEOUT) break ;;
  esac
  sleep 0.5
done
[[ $(job_state "$merge") == JobState=COMPLETED ]] ||
  fail "merge job $merge ended in $(job_state "$merge") (an array task failed?)"
for task in $(seq 0 7); do
  [[ $(job_state "${array}_$task") == JobState=COMPLETED ]] ||
    fail "array task $task: $(job_state "${array}_$task")"
done

# Every shard published its DB; the merge holds every shape, and the export the runtime loads.
for task in $(seq 0 7); do
  [[ -f $MMTUNE_RESULTS/shards/tune-$task.db ]] || fail "shard $task published no DB"
done
grep -l "nothing to tune" "$work"/submit/mmtune-tune-*.log > /dev/null ||
  fail "no shard said it had nothing to do"
for db in "$MMTUNE_RESULTS/fleet.db" "$MMTUNE_RESULTS/deploy/mmtune.db"; do
  for shape in ${shapes//,/ }; do
    tier=$("$mmtune" lookup --db "$db" --shape "$shape" --threads 1 --json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["tier"])')
    [[ $tier == exact ]] || fail "$db answers $shape from the '$tier' tier, not a tuned winner"
  done
done
ls "$work"/results/shards/.*.part 2> /dev/null && fail "a half-published shard was left behind"
echo "slurm_test: 8 shards of 3 shapes tuned, merged and exported through Slurm"
