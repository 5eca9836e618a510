#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for one real run of tools/slurm/blocksweep-array.sbatch:
#
#   1. munged with a fresh key, slurmctld and slurmd (as root), all of their state, sockets, logs
#      and configuration in a temporary directory; nothing under /etc is read or written;
#   2. sbatch --wait submits the array job (the same file a real cluster gets), one task per API
#      that `blocksweep apis` lists;
#   3. `blocksweep compare` on the JSON files the tasks wrote: its output is this script's stdout;
#   4. the daemons are stopped and the temporary directory removed on any exit (trap).
#
# Environment:
#   BLOCKSWEEP_BIN      the blocksweep binary (required; `make slurm` passes target/release/blocksweep)
#   BLOCKSWEEP_RESULTS  where the tasks' JSON files, .skipped notes and Slurm logs go
#                       (default: target/slurm-local in this repository); compare's output is
#                       also written there, as <job id>-compare.txt
#   BLOCKSWEEP_ARGS     `blocksweep sweep` arguments for every task
#                       (default: "--size 256x256 --blocks 64,256", quick on CPU drivers)
#   SLURM_LOCAL_TIMEOUT seconds the job may take before it is cancelled (default 300)
#   SLURM_LOCAL_KEEP    set to 1 to keep the temporary directory (configuration, daemon logs)
#
# Exit status: 0 when every task succeeded and compare ran; 1 when the job or compare failed;
# 3 when Slurm or munge is not installed (apt-get install slurmctld slurmd slurm-client munge).
# Everything but compare's output goes to stderr.
set -euo pipefail

say() { echo "local-cluster: $*" >&2; }
die() {
    say "$*"
    exit 1
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
job_script=$here/blocksweep-array.sbatch

# The daemons live in sbin, which a non-root PATH often lacks.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
for c in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
    if ! command -v "$c" >/dev/null; then
        say "$c is not installed (apt-get install slurmctld slurmd slurm-client munge)"
        exit 3
    fi
done
[[ $(id -u) == 0 ]] || die "run as root: slurmd starts job tasks as their owner, and this runs both"

bin=${BLOCKSWEEP_BIN:?"set BLOCKSWEEP_BIN to the blocksweep binary (make slurm does)"}
[[ -x $bin ]] || die "BLOCKSWEEP_BIN=$bin is not an executable"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
results=${BLOCKSWEEP_RESULTS:-$here/../../target/slurm-local}
mkdir -p "$results"
results=$(cd "$results" && pwd)
args=${BLOCKSWEEP_ARGS:---size 256x256 --blocks 64,256}
timeout_s=${SLURM_LOCAL_TIMEOUT:-300}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/blocksweep-slurm.XXXXXX")
chmod 700 "$tmp"
pids=()
cleanup() {
    local status=$?
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill "${pids[i]}" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if ((status != 0)); then
        for log in "$tmp"/*.log; do
            [[ -f $log ]] || continue
            say "--- last lines of $(basename "$log") ---"
            tail -n 20 "$log" >&2 || true
        done
    fi
    if [[ ${SLURM_LOCAL_KEEP:-} == 1 ]]; then
        say "kept $tmp"
    else
        rm -rf "$tmp"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND...: run COMMAND every 0.2 s until it succeeds.
wait_for() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out waiting for $what"
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null || die "a daemon exited while waiting for $what"
        done
        sleep 0.2
    done
}

# A free TCP port on 127.0.0.1 from $1 up (nothing answers a connection to it).
free_port() {
    local p=$1
    while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do
        p=$((p + 1))
    done
    echo "$p"
}

# --- munge: a key of our own, a socket of our own ---
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge.key"
mkdir -m 711 "$tmp/munge"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge/socket" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/seed" --log-file="$tmp/munged.log" \
    >>"$tmp/munged.log" 2>&1 &
pids+=($!)
wait_for 10 munged test -S "$tmp/munge/socket"

# --- slurm.conf: one node, no cgroups, no accounting ---
host=$(hostname -s)
cpus=$(nproc)
((cpus > 2)) && cpus=2
ctld_port=$(free_port 16817)
slurmd_port=$(free_port $((ctld_port + 1)))
mkdir -p "$tmp/state" "$tmp/spool"
# Job ids name the result files (<job id>-<api>-<task>.json): start them from the clock, so that
# runs into one results directory do not overwrite each other (a fresh state restarts at 1).
first_job_id=$(($(date +%s) % 60000000 + 1000))
cat >"$tmp/slurm.conf" <<EOF
ClusterName=blocksweep-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=60
InactiveLimit=0
FirstJobId=$first_job_id
MinJobAge=300
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

say "starting slurmctld and slurmd ($host, $cpus CPUs, ports $ctld_port/$slurmd_port) in $tmp"
slurmctld -D -i -f "$SLURM_CONF" >>"$tmp/slurmctld.log" 2>&1 &
pids+=($!)
wait_for 30 slurmctld scontrol ping
slurmd -D -f "$SLURM_CONF" >>"$tmp/slurmd.log" 2>&1 &
pids+=($!)
node_idle() { [[ $(sinfo -h -n "$host" -o %T) == idle ]]; }
wait_for 60 "the node to be idle" node_idle

# --- the job array: one task per API of the binary's list ---
apis=$("$bin" apis)
array=0-$(($(wc -l <<<"$apis") - 1))
say "sbatch --wait --array=$array $job_script (${apis//$'\n'/ }; BLOCKSWEEP_ARGS=$args)"
set +e
job=$(cd "$results" && BLOCKSWEEP_BIN=$bin BLOCKSWEEP_RESULTS=$results BLOCKSWEEP_ARGS=$args \
    timeout "$timeout_s" sbatch --parsable --wait --array="$array" --chdir="$results" \
    --output="$results/slurm-%A_%a.out" "$job_script")
job_status=$?
set -e
job=${job%%;*}
for out in "$results/slurm-${job:-none}"_*.out; do
    [[ -f $out ]] || continue
    say "--- $(basename "$out") ---"
    cat "$out" >&2
done
if ((job_status != 0)); then
    [[ -n $job ]] && scancel "$job" 2>/dev/null
    [[ -n $job ]] && scontrol show job "$job" >&2 2>/dev/null
    die "the array job ${job:-?} failed (sbatch exit $job_status)"
fi
say "array job $job done"

# --- compare ---
shopt -s nullglob
runs=("$results/$job"-*.json)
for s in "$results/$job"-*.skipped; do
    say "skipped: $(cat "$s")"
done
((${#runs[@]} > 0)) || die "no task wrote a JSON file"
if ((${#runs[@]} == 1)); then
    say "only one API ran (${runs[0]}): nothing to compare it with"
    exit 0
fi
"$bin" compare "${runs[@]}" | tee "$results/$job-compare.txt"
