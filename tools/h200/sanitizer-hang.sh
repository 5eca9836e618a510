#!/usr/bin/env bash
# How often the built-in CUDA sweep hangs under compute-sanitizer's default options, in this
# process and with --workers, and where it waits when it does (each thread's wait channel and,
# where gdb is, its stack), plus the environment the sanitizer gives its target. Runs from
# tools/h200/run.sh's directory conventions: OUT, B, DEV. Results: $OUT/sanhang/.
set -u
R=${OUT:?}/sanhang
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H200}
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
"$CS" env 2>&1 | grep -iE 'cuda|sanit|inject|preload|nv_|tool' > "$R/target-env.txt"
small=(sweep --backend cuda --device "$DEV" --size 1280x720 --warmups 1 --reps 5 --no-copy)
one() {
  local name=$1; shift
  local t0=$SECONDS
  timeout 40 "$CS" "$B" "${small[@]}" "$@" > "$R/$name.txt" 2>&1 &
  local job=$! waited=0
  while kill -0 "$job" 2> /dev/null && [ $waited -lt 25 ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 "$job" 2> /dev/null; then
    for p in $(pgrep -x blocksweep); do
      echo "== pid $p: $(tr '\0' ' ' < /proc/$p/cmdline)"
      for t in /proc/$p/task/*; do echo "  $(cat $t/comm): $(cat $t/wchan)"; done
      command -v gdb > /dev/null && timeout 10 gdb -batch -p "$p" -ex 'thread apply all bt 10' 2>&1 | grep -E '^(Thread|#)' | head -60
    done > "$R/$name-stacks.txt" 2>&1
  fi
  wait "$job"
  echo "$name: exit $? after $((SECONDS - t0)) s" >> "$R/summary.txt"
}
for i in 1 2 3 4 5; do one "inprocess-$i"; one "workers-$i" --workers; done
cat "$R/summary.txt"
