#!/usr/bin/env bash
# Everything blocksweep measures on the lent NVIDIA H200, in one device call. Runs in the
# repository root there, with the release binary, benches/bin and .gl/ (Debian's Vulkan/OpenCL
# loaders and glvnd, see ../shared/device.md) carried. PARTS selects what runs (default: all):
#   env core trace cuda bench lab kit multi kernels big zoo wall sanitizer tune targets runs
# (tune: issue 28, tools/h200/tune-bench.sh: the reduce-elems tune cold and cached, with wall
# times and its compile count, and the grayscale block x grid map for docs/day10.md.)
# (zoo: the bug zoo and kernels written on the spot, tools/h200/zoo.sh; wall: the default
# sweep's wall time against the binary $BASE of an earlier commit, and a user's kernel in
# workers against --in-process; sanitizer: devices and sweeps under compute-sanitizer's
# default options; sandiag, sanhang: where a sweep under it waits, and how often.)
# (progtrace: the grayscale spec's run and the built-in sweep, traced phase by phase, and
# shapes under --vk-validation.)
# (kit: every GPU-only test, from the binaries tools/h200/kit-build.sh builds and carries in .h1/kit.)
# (big: issue 21's 50000x50000 frame with its trace, wall time, peak RSS and the floors; not in
# the default list: it needs about 70 GB of host memory and a minute.)
# Results: $OUT/h200-<part>.tgz, one per part (a call brings back at most 8 files).
set -u
status=0
export OUT=${OUT:?}
export B=${B:-./target/release/blocksweep}
PARTS=${PARTS:-env core trace cuda bench lab kit}
DEV=${DEV:-H200}
D=$(date -u +%F)

# The loaders, where .gl/ was carried (the lent machine, as root), then NVIDIA's ICD files.
if ls .gl/*.deb > /dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  [ -f /etc/OpenCL/vendors/nvidia.icd ] || { mkdir -p /etc/OpenCL/vendors; echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd; }
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi

# run DIR NAME ARGS...: one blocksweep command; its command line, output and exit code in
# DIR/NAME.txt.
run() {
  local dir=$1 name=$2; shift 2
  mkdir -p "$dir"
  { echo "\$ blocksweep $*"; "$B" "$@" 2>&1; echo "exit $?"; } > "$dir/$name.txt"
}
pack() { tar czf "$OUT/h200-$1.tgz" -C "$OUT" "$1" && rm -rf "${OUT:?}/$1"; }
# san NAME LIMIT CMD...: one command under compute-sanitizer ($CS) or not, killed after LIMIT
# seconds; its command line, output, exit code and time in $R/NAME.txt, a line in summary.txt.
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
san() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  { echo "\$ $*"; timeout "$limit" "$@" 2>&1; echo "exit $? after $((SECONDS - t0)) s"; } > "$R/$name.txt"
  echo "$name: $(grep -E 'ERROR SUMMARY|No attachable' "$R/$name.txt" | tail -1) $(tail -1 "$R/$name.txt")" >> "$R/summary.txt"
}

for part in $PARTS; do
  R=$OUT/$part
  mkdir -p "$R"
  case $part in
    env)
      { date -u; uname -a; nvidia-smi; nvcc --version; ls -l /etc/OpenCL/vendors; echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; } > "$R/env.txt" 2>&1
      run "$R" devices devices
      run "$R" devices-json devices --format json
      run "$R" limits limits --device "$DEV"
      run "$R" limits-md limits --device "$DEV" --format markdown
      for api in $("$B" apis); do run "$R" "limits-$api" limits --backend "$api" --device "$DEV"; done
      ;;
    core)
      # The merged run that the README and the guide quote, at 4K and 8K.
      run "$R" merged sweep --device "$DEV" -o "$R/h200-$D.json" -o "$R/h200-$D.md" --plot "$R/h200-$D.svg"
      run "$R" merged-8k sweep --device "$DEV" --size 7680x4320 -o "$R/h200-8k-$D.json"
      # What each timing discipline reads, one run each (issue 8: synced reproduces the old figures).
      for t in each synced; do run "$R" "merged-$t" sweep --device "$DEV" --timing $t -o "$R/h200-$t-$D.json"; done
      # Is the ranking inside the plateau stable? Five repeats of the same CUDA sweep.
      for i in 1 2 3 4 5; do run "$R" "cuda-repeat-$i" sweep --backend cuda --device "$DEV" --format csv; done
      run "$R" validate validate --device "$DEV"
      run "$R" validate-md validate --device "$DEV" --format markdown
      ;;
    trace)
      (
        export BLOCKSWEEP_TRACE=1
        for i in 1 2; do run "$R" "limits-opencl-$i" limits --backend opencl --device "$DEV"; done
        run "$R" sweep-trace sweep --device "$DEV"
        run "$R" sweep-trace-overlap-close sweep --device "$DEV" --overlap-close
      )
      for i in 1 2 3; do
        /usr/bin/time -f "%e s wall" -o "$R/wall-$i.txt" "$B" sweep --device "$DEV" > /dev/null 2>&1
        /usr/bin/time -f "%e s wall" -o "$R/wall-overlap-close-$i.txt" "$B" sweep --device "$DEV" --overlap-close > /dev/null 2>&1
      done
      ;;
    cuda) bash tools/h200/cuda-paths.sh > "$R/cuda-paths.log" 2>&1; mv "$OUT/cuda-paths" "$R/" 2>/dev/null ;;
    bench) bash tools/h200/bench.sh > "$R/bench-run.log" 2>&1; mv "$OUT/bench" "$R/" 2>/dev/null ;;
    lab) [ -f tools/h200/lab.sh ] && bash tools/h200/lab.sh > "$R/lab-run.log" 2>&1 ;;
    kernels) bash tools/h200/kernels.sh > "$OUT/kernels-run.log" 2>&1; mv "$OUT/kernels-run.log" "$R/" ;;
    zoo) bash tools/h200/zoo.sh > "$OUT/zoo-run.log" 2>&1; mv "$OUT/zoo-run.log" "$R/" ;;
    tune) R=$R bash tools/h200/tune-bench.sh > "$OUT/tune-run.log" 2>&1; mv "$OUT/tune-run.log" "$R/" ;;
    sanfinal)
      # After the fix: devices three times and the CUDA sweep five times under the default
      # options (every API of a sweep in a worker there), the three-API 4K sweep once, and a
      # user's kernel.
      for i in 1 2 3; do san "devices-$i" 40 "$CS" "$B" devices; done
      for i in 1 2 3 4 5; do
        san "sweep-cuda-$i" 60 "$CS" "$B" sweep --backend cuda --device "$DEV" --size 1280x720 --warmups 1 --reps 5 --no-copy
      done
      san kernel-cuda 60 "$CS" "$B" sweep --kernel examples/kernels/saxpy/kernel.toml --backend cuda --device "$DEV" --size 1048576 --warmups 1 --reps 5 --no-copy
      san sweep-all-4k 150 "$CS" "$B" sweep --device "$DEV"
      ;;
    sanhang) bash tools/h200/sanitizer-hang.sh > "$OUT/sanhang-run.log" 2>&1; mv "$OUT/sanhang-run.log" "$R/" ;;
    wall)
      # The default three-API sweep, this binary against $BASE (an earlier commit's), alternated;
      # then the grayscale spec in workers (the default for --kernel) against --in-process, and
      # the built-in sweep with --workers: wall time, and each run's JSON for its best rows.
      # With WebGPU in, the three APIs of the earlier commits are picked by BLOCKSWEEP_APIS.
      export BLOCKSWEEP_APIS=${WALL_APIS:-}
      # The order alternates too (this binary first in odd pairs, $BASE first in even ones):
      # call12 ran this binary first in every pair and found it slower in four of five.
      now() { /usr/bin/time -f "%e" -o "$R/wall-now-$1.txt" "$B" sweep --device "$DEV" -o "$R/now-$1.json" > /dev/null 2>&1; }
      base() { [ -x "${BASE:-}" ] && /usr/bin/time -f "%e" -o "$R/wall-base-$1.txt" "$BASE" sweep --device "$DEV" -o "$R/base-$1.json" > /dev/null 2>&1; }
      for i in $(seq 1 "${WALL_PAIRS:-5}"); do
        if [ $((i % 2)) -eq 1 ]; then now "$i"; base "$i"; else base "$i"; now "$i"; fi
      done
      spec=examples/kernels/grayscale/kernel.toml
      # WALL_SPEC=0: the default sweeps only (a call that carries no glslangValidator).
      [ "${WALL_SPEC:-1}" = 0 ] || for i in 1 2 3; do
        /usr/bin/time -f "%e" -o "$R/wall-spec-workers-$i.txt" "$B" sweep --kernel $spec --device "$DEV" -o "$R/spec-workers-$i.json" > /dev/null 2>&1
        /usr/bin/time -f "%e" -o "$R/wall-spec-inproc-$i.txt" "$B" sweep --kernel $spec --device "$DEV" --in-process -o "$R/spec-inproc-$i.json" > /dev/null 2>&1
        /usr/bin/time -f "%e" -o "$R/wall-builtin-workers-$i.txt" "$B" sweep --device "$DEV" --workers -o "$R/builtin-workers-$i.json" > /dev/null 2>&1
      done
      python3 tools/h200/wall-summary.py "$R" > "$R/summary.txt" 2>&1
      unset BLOCKSWEEP_APIS
      ;;
    walltrace)
      # Where the default three-API sweep's wall time goes, this binary against $BASE, traced
      # (BLOCKSWEEP_TRACE=1) and alternated three times; trace-summary.py sums each file.
      for i in 1 2 3; do
        { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 BLOCKSWEEP_APIS=${WALL_APIS:-} "$B" sweep --device "$DEV" > /dev/null; } 2> "$R/now-trace-$i.txt"
        [ -x "${BASE:-}" ] && { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$BASE" sweep --device "$DEV" > /dev/null; } 2> "$R/base-trace-$i.txt"
      done
      python3 tools/h200/trace-summary.py "$R" > "$R/summary.txt" 2>&1
      ;;
    webgpu)
      # Issue 42: the four APIs in one table on one GPU (the default sweep, twice, with JSON),
      # WebGPU beside Vulkan alone, the limits and what validate says a WebGPU port may assume,
      # and the specification's default limits asked for (--webgpu-limits default).
      run "$R" limits limits --device "$DEV"
      for i in 1 2; do run "$R" four-$i sweep --device "$DEV" --verbose -o "$R/four-$i.json"; done
      run "$R" four-cold sweep --device "$DEV" --cold -o "$R/four-cold.json"
      run "$R" validate validate --device "$DEV"
      run "$R" validate-webgpu-defaults validate --device "$DEV" --backend webgpu --webgpu-limits default
      run "$R" sweep-webgpu-defaults sweep --device "$DEV" --backend webgpu --webgpu-limits default
      run "$R" shapes shapes --device "$DEV" --threads 256
      for k in examples/kernels/*/kernel.toml; do
        grep -q '^webgpu' "$k" || continue
        n=$(basename "$(dirname "$k")")
        run "$R" "kernel-$n" sweep --kernel "$k" --device "$DEV" -o "$R/kernel-$n.json"
      done
      ;;
    progtrace)
      # Where a user's kernel's run spends its wall time, against the built-in sweep's (issue
      # 26, item 1): the grayscale spec in-process and the built-in sweep, each traced
      # (BLOCKSWEEP_TRACE=1) and timed, twice; then `shapes --vk-validation` (each API's
      # checking-layer messages said once). tools/h200/trace-summary.py sums the phases.
      spec=examples/kernels/grayscale/kernel.toml
      for i in 1 2; do
        { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$B" sweep --kernel $spec --device "$DEV" --in-process > "$R/spec-$i.txt"; } 2> "$R/spec-trace-$i.txt"
        { /usr/bin/time -f "%e s wall" env BLOCKSWEEP_TRACE=1 "$B" sweep --device "$DEV" > "$R/builtin-$i.txt"; } 2> "$R/builtin-trace-$i.txt"
      done
      run "$R" shapes-vk-validation shapes --device "$DEV" --vk-validation --threads 256
      python3 tools/h200/trace-summary.py "$R" > "$R/summary.txt" 2>&1
      ;;
    sanitizer)
      # compute-sanitizer with its default options (memcheck): devices, and CUDA sweeps of the
      # built-in kernel and of a user's kernel (its worker process is followed by default).
      san devices 60 "$CS" "$B" devices
      san sweep-cuda 120 "$CS" "$B" sweep --backend cuda --device "$DEV" --size 1280x720 --warmups 1 --reps 5 --no-copy
      san kernel-cuda 120 "$CS" "$B" sweep --kernel examples/kernels/saxpy/kernel.toml --backend cuda --device "$DEV" --size 1048576 --warmups 1 --reps 5 --no-copy
      # The zoo's two bugs that the H200 happens to run right: CUDA's synccheck and racecheck
      # name them where the outputs cannot.
      bugs=examples/kernels/bugs
      san synccheck-divergent-barrier 90 "$CS" --tool synccheck "$B" sweep --kernel $bugs/divergent-barrier/kernel.toml --backend cuda --device "$DEV" --blocks 96,256 --warmups 1 --reps 2 --no-copy
      san racecheck-warp-sync-reduction 90 "$CS" --tool racecheck "$B" sweep --kernel $bugs/warp-sync-reduction/kernel.toml --backend cuda --device "$DEV" --blocks 256 --warmups 1 --reps 2 --no-copy
      # Were the drivers starting on several threads at once what hung `devices` before?
      BLOCKSWEEP_PROBE=parallel san devices-parallel-probe 40 "$CS" "$B" devices
      ;;
    sandiag)
      # Where the built-in CUDA sweep waits under compute-sanitizer's default options: in
      # workers (CUDA's context made on the worker's main thread); traced, with every thread's
      # kernel wait channel and stack after 20 s; and how long it takes with --launch-timeout 60.
      small=(--backend cuda --device "$DEV" --size 1280x720 --warmups 1 --reps 5 --no-copy)
      san sweep-cuda-workers 90 "$CS" "$B" sweep "${small[@]}" --workers
      (BLOCKSWEEP_TRACE=1 timeout 45 "$CS" "$B" sweep "${small[@]}" > "$R/sweep-cuda-trace.txt" 2>&1 &
       sleep 20
       for p in $(pgrep -x blocksweep); do
         echo "== pid $p: $(tr '\0' ' ' < /proc/$p/cmdline)"
         for t in /proc/$p/task/*; do echo "  $(cat $t/comm): $(cat $t/wchan) $(cat $t/stat | cut -d' ' -f3)"; done
         command -v gdb > /dev/null && timeout 20 gdb -batch -p "$p" -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' | head -80
       done > "$R/stacks.txt" 2>&1
       wait)
      san sweep-cuda-launch-timeout-60 120 "$CS" --launch-timeout 60 "$B" sweep "${small[@]}"
      san kernel-cuda 90 "$CS" "$B" sweep --kernel examples/kernels/saxpy/kernel.toml --backend cuda --device "$DEV" --size 1048576 --warmups 1 --reps 5 --no-copy
      ;;
    kit)
      # Every GPU-only test: the conformance kit and the backends' own tests (CUDA's user-kernel
      # tests, crates/cuda/tests/program.rs, among them), built by tools/h200/kit-build.sh and
      # carried in $KIT (one binary per file, <crate>-<target>); every API required (`blocksweep
      # apis`), one test at a time, with --include-ignored: the trials ignored for want of a GPU
      # or for their length (the 4K seed sweep) run here. --skip child_: a child trial is run by
      # its parent, in the process environment it needs. KIT_SRC: the checkout they were built
      # in, linked to this one, for the tests that read the crate's own sources.
      if [ -n "${KIT_SRC:-}" ] && [ ! -e "$KIT_SRC" ]; then mkdir -p "$(dirname "$KIT_SRC")"; ln -s "$PWD" "$KIT_SRC"; fi
      require=$("$B" apis | paste -sd, -)
      kit=${KIT:-.h1/kit}
      # Vulkan's checking-layer tests need the layer there (vulkan-validationlayers in .gl/).
      if ! ls /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > /dev/null 2>&1; then
        echo "kit: MISSING the Vulkan validation layer (carry vulkan-validationlayers in .gl/)" >> "$R/summary.txt"
        status=1
      fi
      for need in cuda-conformance cuda-device cuda-program cuda-lib vulkan-conformance vulkan-program \
                  opencl-conformance opencl-program tests-cross_api; do
        [ -x "$kit/$need" ] || echo "kit: MISSING $need (tools/h200/kit-build.sh builds it)" >> "$R/summary.txt"
      done
      for t in "$kit"/*; do
        [ -x "$t" ] || continue
        { echo "\$ BLOCKSWEEP_REQUIRE=$require $(basename "$t") --include-ignored --skip child_ --test-threads=1"
          BLOCKSWEEP_REQUIRE=$require timeout 600 "$t" --include-ignored --skip child_ --test-threads=1 2>&1
          echo "exit $?"; } > "$R/$(basename "$t").txt"
        # A part that fails fails the run (it was recorded and the run still exited 0).
        [ "$(tail -n 1 "$R/$(basename "$t").txt")" = "exit 0" ] || status=1
      done
      # The summary the closing note quotes: each binary's result line and exit code.
      for f in "$R"/*.txt; do
        [ "$f" = "$R/summary.txt" ] && continue
        printf '%s: %s; %s\n' "$(basename "$f" .txt)" \
          "$(grep -h '^test result:' "$f" | tail -n 1)" "$(tail -n 1 "$f")" >> "$R/summary.txt"
      done
      ;;
    big)
      # Issue 21: the issue's command exactly, traced, under /usr/bin/time -v (wall time, peak
      # RSS); then the floors its phases are set against (benches/cuda/floors.cu: pinned and
      # pageable PCIe copies both ways, device-to-device and host-to-host copies of 4 GiB).
      { date -u; nproc; free -g; nvidia-smi --query-gpu=name,memory.total,memory.used,pcie.link.gen.current,pcie.link.width.current --format=csv; } > "$R/env.txt" 2>&1
      (
        export BLOCKSWEEP_TRACE=1
        cmd=(sweep --device "$DEV" --size 50000x50000 --blocks 256,1024 --warmups 1 --reps 3 --no-copy)
        echo "\$ BLOCKSWEEP_TRACE=1 blocksweep ${cmd[*]}" > "$R/big.cmd"
        /usr/bin/time -v -o "$R/big.time" "$B" "${cmd[@]}" > "$R/big.out" 2> "$R/big.err"
        echo "exit $?" >> "$R/big.cmd"
      )
      nvcc -std=c++17 -O3 -o /tmp/floors benches/cuda/floors.cu > "$R/floors-nvcc.txt" 2>&1 \
        && /tmp/floors 4 5 > "$R/floors.txt" 2>&1
      bash tools/h200/big-summary.sh "$R" > "$R/summary.txt" 2>&1
      ;;
    targets)
      # Issue 36: --target as a new user meets it on this GPU (tools/targets/run.sh), the GPU
      # written as a target file among its results.
      # A kernel of the zoo that loops for ever waits out the deadline on each API: 5 s is enough
      # for what --target says.
      BLOCKSWEEP_DEADLINE_S=${TARGETS_DEADLINE_S:-5} R=$R DEV="$DEV" B="$B" bash tools/targets/run.sh > "$R/targets-run.log" 2>&1
      ;;
    runs)
      # Issue 37: the runs `compare` merges across GPUs: the default sweep and the examples.
      run "$R" sweep sweep --device "$DEV" -o "$R/sweep-$D.json"
      for k in saxpy transpose reduce; do
        run "$R" "$k" sweep --kernel "examples/kernels/$k/kernel.toml" --device "$DEV" -o "$R/$k-$D.json"
      done
      # Issue 41: the stopping rule by precision, reached or reported on every row.
      run "$R" max-noise sweep --device "$DEV" --max-noise 0.5% -o "$R/max-noise-$D.json"
      ;;
    multi)
      run "$R" devices devices
      run "$R" devices-json devices --format json
      run "$R" limits-all limits --device all
      run "$R" sweep-all sweep --device all -o "$R/x2-$D.json" -o "$R/x2-$D.md"
      run "$R" compare compare "$R/x2-$D.json"
      run "$R" validate-all validate --device all
      ;;
  esac
  pack "$part"
done
ls -la "$OUT"
[ "$status" -eq 0 ] || echo "run.sh: a part failed (kit/summary.txt says which)" >&2
exit "$status"
