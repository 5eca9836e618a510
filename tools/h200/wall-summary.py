#!/usr/bin/env python3
"""Summarises run.sh's wall part: wall times per mode (median, min, max) and each mode's best
row per API (GB/s, from the runs' JSON), so that a change's cost is read from one device call."""
import glob, json, os, statistics, sys

r = sys.argv[1]

def walls(mode):
    out = []
    for f in sorted(glob.glob(os.path.join(r, f"wall-{mode}-*.txt"))):
        try:
            out.append(float(open(f).read().split()[-1]))
        except (ValueError, IndexError):
            pass
    return out

def best(prefix):
    per = {}
    for f in sorted(glob.glob(os.path.join(r, f"{prefix}-*.json"))):
        try:
            runs = json.load(open(f))
        except (OSError, ValueError):
            continue
        for run in runs if isinstance(runs, list) else [runs]:
            for res in run.get("results", []):
                g = [x.get("gbps") or 0 for x in res.get("rows", []) if x.get("timing")]
                if g:
                    per.setdefault(res["api"], []).append(max(g))
    return per

for mode, prefix in [("now", "now"), ("base", "base"), ("spec-workers", "spec-workers"),
                     ("spec-inproc", "spec-inproc"), ("builtin-workers", "builtin-workers")]:
    w = walls(mode)
    if not w:
        continue
    print(f"{mode:16} wall s: median {statistics.median(w):.2f}, min {min(w):.2f}, max {max(w):.2f} "
          f"({len(w)} runs)")
    for api, gs in sorted(best(prefix).items()):
        print(f"{'':16} {api:7} best GB/s: median {statistics.median(gs):.1f} "
              f"({', '.join(f'{g:.1f}' for g in gs)})")
