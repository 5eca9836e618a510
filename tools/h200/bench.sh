#!/usr/bin/env bash
# Issue 8's benchmarks on the lent H200, in one device call: blocksweep against the plain
# programs of benches/ (CUDA, OpenCL C, Vulkan C), per API, at 4K and 8K, over 2 rounds in
# alternating order; then benches/summarize.py and the wall time of the default every-API sweep.
# An API that benches/ has no plain program for is measured by blocksweep alone, and said so.
#
# Runs in the repository root there. Expects (the lead's wrapper sets these up):
#   $OUT                      results go under "$OUT/bench/"
#   $B                        blocksweep release binary (default ./target/release/blocksweep)
#   benches/bin/grayscale_bench_cl, benches/bin/grayscale_bench_vk   built here by
#                             `make -C benches` and carried (they need only libOpenCL.so.1 /
#                             libvulkan.so.1); the CUDA program is compiled there with nvcc
#   VK_DRIVER_FILES and /etc/OpenCL/vendors/nvidia.icd   so that both loaders see the GPU
# Knobs (environment): DEV (device name substring, default H200; empty: each program's own
# default device), SIZES ("3840x2160 7680x4320"), APIS (every API `blocksweep apis` lists), ROUNDS (2),
# PLAIN_REPS (N of the plain programs; default 200 at 4K and below, 100 above), WALL_RUNS (5 of each mode),
# WALL_ARGS (extra arguments for the timed sweeps: none on the H200, where the defaults count),
# PACK (1: leave summary.txt, bench.log and one raw.tgz instead of every raw file),
# DEADLINE_S (330: a round that would end later is skipped), STEP_S (150: timeout of each program).
# Expected duration on an H200: about 2-3 minutes (see benches/README.md).
set -u
R=${OUT:?}/bench
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV-H200}
SIZES=${SIZES:-3840x2160 7680x4320}
APIS=${APIS:-$("$B" apis | paste -sd' ' -)}
ROUNDS=${ROUNDS:-2}
WALL_RUNS=${WALL_RUNS:-5}
read -r -a wallargs <<< "${WALL_ARGS:-}"
PACK=${PACK:-1}
DEADLINE_S=${DEADLINE_S:-330}   # no round starts that would end (at round 1's pace) past this
STEP_S=${STEP_S:-150}           # no single program may run longer (timeout(1), where present)
TO=(); command -v timeout > /dev/null && TO=(timeout "$STEP_S")
BIN=${BENCH_BIN:-benches/bin}
LOG=$R/bench.log
T0=$(date +%s)
note() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$LOG"; }
devarg=(); [ -n "$DEV" ] && devarg=(--device "$DEV")

{
  date -u; uname -a; nvidia-smi 2>&1 | head -20; nvcc --version 2>&1 | tail -2
  echo "B=$B DEV=$DEV SIZES=$SIZES APIS=$APIS ROUNDS=$ROUNDS"   # summarize.py reads APIS= here
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; ls -l /etc/OpenCL/vendors/ 2>&1
  git rev-parse HEAD 2>/dev/null; git status --short 2>/dev/null | head -20
  "$B" --version; "$B" devices
} > "$R/env.txt" 2>&1

# The plain programs benches/ has, per API. The CUDA program: compiled here, from benches/cuda
# (it #includes kernels/grayscale.cu).
mkdir -p /tmp/bench-bin
declare -A PLAIN=([opencl]="$BIN/grayscale_bench_cl" [vulkan]="$BIN/grayscale_bench_vk" [cuda]=/tmp/bench-bin/grayscale_bench_cuda)
case " $APIS " in *" cuda "*)
  note "nvcc benches/cuda/grayscale_bench.cu"
  nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/bench-bin/grayscale_bench_cuda benches/cuda/grayscale_bench.cu \
    > "$R/nvcc.txt" 2>&1 || note "nvcc failed (see nvcc.txt): no plain CUDA rows"
esac
for api in $APIS; do
  if [ -z "${PLAIN[$api]:-}" ]; then note "benches/ has no plain $api program: blocksweep rows only"
  elif [ ! -x "${PLAIN[$api]}" ]; then note "missing ${PLAIN[$api]}: no plain $api rows"; fi
done

reps_for() { # N of the plain programs for a size
  local w=${1%x*} h=${1#*x}
  if [ -n "${PLAIN_REPS:-}" ]; then echo "$PLAIN_REPS"; elif [ $((w * h)) -le $((3840 * 2160)) ]; then echo 200; else echo 100; fi
}

# blocksweep's grids for one API and size, as block:grid,... (from its batch CSV).
grids_of() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
except OSError:
    rows = []
print(",".join(f"{r['block']}:{r['grid']}" for r in rows
               if r["api"] == sys.argv[2] and r["grid"] and r["block"].isdigit()))
PY
}

bs() { # api size timing round
  local api=$1 size=$2 timing=$3 rnd=$4 f="$R/bs-$1-$2-$3-r$4"
  note "blocksweep $api $size --timing $timing (round $rnd)"
  { echo "\$ $B sweep --backend $api ${devarg[*]:-} --size $size --timing $timing"
    ${TO[@]+"${TO[@]}"} "$B" sweep --backend "$api" ${devarg[@]+"${devarg[@]}"} --size "$size" --timing "$timing" --format csv \
      -o "$f.csv" -o "$f.json"
    echo "exit $?"; } > "$f.log" 2>&1
}

plain() { # api size round
  local api=$1 size=$2 rnd=$3 f="$R/plain-$1-$2-r$3" grids
  [ -x "${PLAIN[$api]:-}" ] || return 0
  # The exact launches of blocksweep's batch run of this round (else round 1's, else the
  # program's own wave grid).
  grids=$(grids_of "$R/bs-$api-$size-batch-r$rnd.csv" "$api")
  [ -n "$grids" ] || grids=$(grids_of "$R/bs-$api-$size-batch-r1.csv" "$api")
  note "plain $api $size N=$(reps_for "$size") (round $rnd)"
  { echo "\$ ${PLAIN[$api]} ${devarg[*]:-} --size $size --reps $(reps_for "$size") ${grids:+--grids $grids}"
    ${TO[@]+"${TO[@]}"} "${PLAIN[$api]}" ${devarg[@]+"${devarg[@]}"} --size "$size" --reps "$(reps_for "$size")" ${grids:+--grids "$grids"} \
      --csv "$f.csv"
    echo "exit $?"; } > "$f.log" 2>&1
}

wall() { # the whole process, every API at 4K with the defaults (13 sizes, verify, copy
  # ceilings), alternately by default (nothing beside a timed batch) and with --overlap-close;
  # each run's JSON on stdout is kept, so that every row can be set against the one-API runs.
  local i mode extra
  for i in $(seq 1 "$WALL_RUNS"); do
    for mode in default overlap-close; do
      extra=(); [ "$mode" = overlap-close ] && extra=(--overlap-close)
      note "wall $i ($mode): blocksweep sweep ${devarg[*]:-} ${wallargs[*]:-} ${extra[*]:-}"
      local f="$R/wall-$mode-$i"
      if [ -x /usr/bin/time ]; then
        /usr/bin/time -f %e -o "$f.txt" "$B" sweep ${devarg[@]+"${devarg[@]}"} ${wallargs[@]+"${wallargs[@]}"} ${extra[@]+"${extra[@]}"} \
          --format json > "$f.json" 2> "$f.err"
      else # no GNU time there: bash's own, same meaning (elapsed seconds)
        { TIMEFORMAT=%R; time "$B" sweep ${devarg[@]+"${devarg[@]}"} ${wallargs[@]+"${wallargs[@]}"} ${extra[@]+"${extra[@]}"} \
            --format json > "$f.json" 2> "$f.err"; } 2> "$f.txt"
      fi
      echo "exit $?" >> "$f.err"
    done
  done
}

# Round 1: blocksweep batch, plain, blocksweep synced; round 2 the reverse, so that each
# comparison has the plain program once before and once after blocksweep. The wall times come
# right after round 1, and a round that would end past DEADLINE_S at round 1's pace is
# skipped, so that the call stays near its ~6-minute budget even if something runs slow.
for rnd in $(seq 1 "$ROUNDS"); do
  if [ "$rnd" -gt 1 ] && [ $(( $(date +%s) - T0 + ROUND_S )) -gt "$DEADLINE_S" ]; then
    note "round $rnd would end past ${DEADLINE_S}s (a round takes ${ROUND_S}s): skipped"; break
  fi
  rs=$(date +%s)
  for size in $SIZES; do
    for api in $APIS; do
      if [ $((rnd % 2)) -eq 1 ]; then
        bs "$api" "$size" batch "$rnd"; plain "$api" "$size" "$rnd"; bs "$api" "$size" synced "$rnd"
      else
        bs "$api" "$size" synced "$rnd"; plain "$api" "$size" "$rnd"; bs "$api" "$size" batch "$rnd"
      fi
    done
  done
  ROUND_S=$(( $(date +%s) - rs ))
  [ "$rnd" -eq 1 ] && wall
done

note "summary"
python3 benches/summarize.py "$R" > "$R/summary.txt" 2>&1
cat "$R/summary.txt"
note "done"
if [ "$PACK" = 1 ]; then
  # At most a few files come back from $OUT: keep the summary and the log loose, pack the rest.
  (cd "$R" && tar czf raw.tgz --exclude raw.tgz --exclude summary.txt --exclude bench.log -- * \
     && find . -maxdepth 1 -type f ! -name raw.tgz ! -name summary.txt ! -name bench.log -delete)
fi
