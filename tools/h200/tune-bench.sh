#!/usr/bin/env bash
# Issue 28's speed check and figures, on the lent H200 (run by tools/h200/run.sh's `tune` part,
# or alone with OUT set): the reduce-elems tune (12 block sizes x ELEMS 1, 2, 4, 8: 48
# configurations, every API of the GPU) from an empty cache, then again with the cache; and the
# grayscale kernel's block x grid map, the figure of docs/day10.md's "both numbers". Wall time
# from `date +%s.%N` around each command; the tune's own JSON says how many sweeps compiled and
# their share of the wall (search.compiles, compile_s, wall_s). Targets: the 48-configuration tune
# in at most 15 s, the cached rerun in at most 2 s.
set -u
: "${OUT:?}"
B=${B:-./target/release/blocksweep}
DEV=${DEV-H200}
# EXTRA: more arguments for every command (a smoke test on CPU drivers: EXTRA="--size 4096" DEV=).
read -r -a EXTRA <<< "${EXTRA:-}"
DEVARGS=()
[ -n "$DEV" ] && DEVARGS=(--device "$DEV")
R=${R:-$OUT/tune}
mkdir -p "$R"
BLOCKS=32,64,96,128,160,192,256,384,512,640,768,1024
CACHE=$R/tune-cache.json
rm -rf "$CACHE" "$CACHE.d"

# timed NAME ARGS...: one blocksweep command, its line, output, exit code and wall seconds.
timed() {
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  { echo "\$ blocksweep $* ${EXTRA[*]}"; "$B" "$@" "${EXTRA[@]}" 2>&1; echo "exit $?"; } > "$R/$name.txt"
  t1=$(date +%s.%N)
  echo "$name: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s wall" | tee -a "$R/summary.txt"
}

spec=examples/kernels/reduce-elems/kernel.toml
timed reduce-elems-cold sweep --kernel $spec "${DEVARGS[@]}" --blocks $BLOCKS --grid 1w \
  --cache "$CACHE" -o "$R/reduce-elems.json" -o "$R/reduce-elems.md" --plot "$R/reduce-elems.svg"
timed reduce-elems-cached sweep --kernel $spec "${DEVARGS[@]}" --blocks $BLOCKS --grid 1w \
  --cache "$CACHE" -o "$R/reduce-elems-cached.json"
# The tune's own account of its compiles, from each JSON.
for j in "$R/reduce-elems.json" "$R/reduce-elems-cached.json"; do
  python3 - "$j" >> "$R/summary.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
s = (doc["tunes"][0] if "tunes" in doc else doc)["search"]
share = 100 * s["compile_s"] / s["wall_s"] if s["wall_s"] else 0
print(f'{sys.argv[1].rsplit("/", 1)[-1]}: {s["covered"]} of {s["space"]} configurations, '
      f'{s["measured"]} measured, {s["from_cache"]} cached, {s["compiles"]} sweeps compiled '
      f'({s["compile_s"]:.2f} s to their first timed rows, {share:.0f} % of {s["wall_s"]:.2f} s)')
PY
done

# "No slower than before" (issue 38): the same cold tune with $BASE (an earlier commit's
# binary) and this one, alternated, twice each, each from an empty cache.
if [ -x "${BASE:-}" ]; then
  # The base may predate an API the spec names (WebGPU's WGSL): both binaries read a copy of
  # the spec without the sources the base does not know, so both tune the same APIs.
  cmp=$(mktemp -d)/reduce-elems
  cp -r "$(dirname "$spec")" "$cmp"
  known=$("$BASE" apis | paste -sd'|' -)
  grep -Ev "^($(echo webgpu cuda vulkan opencl | tr ' ' '\n' | grep -Evx "$known" | paste -sd'|' -)) *=" "$spec" > "$cmp/kernel.toml"
  spec=$cmp/kernel.toml
  for i in 1 2; do
    for who in base now; do
      bin=$B; [ "$who" = base ] && bin=$BASE
      rm -rf "$R/cmp-cache.json" "$R/cmp-cache.json.d"
      t0=$(date +%s.%N)
      "$bin" sweep --kernel $spec "${DEVARGS[@]}" --blocks $BLOCKS --grid 1w --cache "$R/cmp-cache.json" \
        -o "$R/reduce-elems-$who-$i.json" "${EXTRA[@]}" > "$R/reduce-elems-$who-$i.txt" 2>&1
      echo "exit $?" >> "$R/reduce-elems-$who-$i.txt"
      t1=$(date +%s.%N)
      echo "reduce-elems-$who-$i: $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s wall" | tee -a "$R/summary.txt"
    done
  done
  rm -rf "$R/cmp-cache.json" "$R/cmp-cache.json.d"
fi

# The grayscale kernel's block x grid map (docs/day10.md): the built-in kernel, the 13 sizes.
timed grayscale-map sweep "${DEVARGS[@]}" --grid 0.5w,1w,2w,4w,data --no-cache \
  -o "$R/grayscale-map.json" -o "$R/grayscale-map.md" --plot "$R/grayscale-map.svg"
# The wider grid axis the issue names, with fixed counts.
timed grayscale-map-wide sweep "${DEVARGS[@]}" --grid 0.5w,1w,2w,4w,data,4096 --no-cache \
  -o "$R/grayscale-map-wide.json"
cat "$R/summary.txt"
