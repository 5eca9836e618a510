#!/usr/bin/env bash
# What the 2026-12-06 second session added without a GPU, checked in one device call (issue 41):
# - hot against --cold at 1280x720 on every API: hot may read above the copy ceiling (the frame
#   fits the L2), cold must not (summary: each API's highest of_copy, hot and cold);
# - a sweep started after the GPU idled: each row's SM clock (sm_mhz) and whether the 75 % rule
#   measured a row again (its note) or marked it (slow_clock);
# - launch-cost on this GPU (tools/h200/launch-cost.sh, ROUNDS rounds).
#
# Runs in the repository root there, as bench.sh does ($OUT, $B, VK_DRIVER_FILES and the NVIDIA
# OpenCL ICD). Knobs: DEV (device name substring, default H100), IDLE (seconds idle, 30),
# ROUNDS (launch-cost rounds, 3).
set -u
R=${OUT:?}/pending
mkdir -p "$R"
B=${B:-./target/release/blocksweep}
DEV=${DEV:-H100}
IDLE=${IDLE:-30}
{ date -u; nvidia-smi 2>&1 | head -12; "$B" --version; } > "$R/env.txt" 2>&1
for mode in hot cold; do
  flag=""; [ "$mode" = cold ] && flag="--cold"
  "$B" sweep --device "$DEV" --size 1280x720 $flag -o "$R/$mode.json" -o "$R/$mode.csv" \
    > "$R/$mode.txt" 2> "$R/$mode.err"
  echo "$?" > "$R/$mode.exit"
done
sleep "$IDLE"
"$B" sweep --device "$DEV" -o "$R/from-idle.json" > "$R/from-idle.txt" 2> "$R/from-idle.err"
echo "$?" > "$R/from-idle.exit"
python3 - "$R" > "$R/summary.txt" 2>&1 <<'PY'
import json, os, sys
d = sys.argv[1]
def results(name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return []
    return json.load(open(p)).get("results", [])
for mode in ("hot", "cold"):
    for r in results(mode + ".json"):
        copies = [x.get("of_copy") for x in r["rows"] if x.get("of_copy") is not None]
        flush = {x["timing"].get("flush_bytes") for x in r["rows"] if x.get("timing")}
        print(f"{mode:4} {r['api']:7} highest of_copy {max(copies, default=float('nan')):.3f}"
              f" flush_bytes {sorted(f for f in flush if f)}")
for r in results("from-idle.json"):
    clocks = [(x["threads"], x.get("sm_mhz"), x.get("slow_clock", False), x.get("note"))
              for x in r["rows"]]
    print(f"from idle {r['api']}: turn {r.get('clocks')} moved: {r.get('clocks_moved')}")
    for t, mhz, slow, note in clocks:
        print(f"  {t:5} {mhz} MHz slow={slow} {note or ''}")
PY
ROUNDS=${ROUNDS:-3} DEV="$DEV" OUT="$OUT" B="$B" bash tools/h200/launch-cost.sh
