#!/usr/bin/env python3
"""Summary of one tools/h200/bench.sh run: plain programs against blocksweep, per API and size.

    python3 benches/summarize.py DIR        (DIR = the run's folder, $OUT/bench)

Reads, from DIR:
  env.txt                                  the run's APIs in order, from "APIS=<keys> ROUNDS="
                                           (bench.sh: `blocksweep apis`, unless APIS names some)
  plain-<api>-<W>x<H>-r<round>.csv         a plain program's CSV (disciplines A, B, C, copy rows)
  bs-<api>-<W>x<H>-<timing>-r<round>.csv   blocksweep's CSV (timing: batch or synced)
  bs-<api>-<W>x<H>-<timing>-r<round>.json  blocksweep's JSON (copy.gbps: the copy ceiling)
  wall-<mode>-<i>.txt, .json               seconds and JSON of one `blocksweep sweep --device H200`
                                           (mode: default, or overlap-close: --overlap-close)
and prints, per API and size and round: the best row's GB/s of plain A and of blocksweep batch
and their ratio, blocksweep batch's best over its own copy ceiling, and blocksweep synced's best
against plain C's; then the checks of issue 8 and the wall times. Standard library only.
"""

import csv
import glob
import json
import os
import re
import statistics
import sys

# Issue 8's thresholds.
PLAIN_RATIO = 0.99
COPY_RATIO_8K = 0.93
WALL_LIMIT_S = 1.2


def run_apis(d):
    """The run's API keys in order: the APIS bench.sh wrote to env.txt, else the keys its CSV files
    are named for, in the order its every-API runs list them (display order)."""
    try:
        with open(os.path.join(d, "env.txt")) as f:
            m = re.search(r"\bAPIS=(.*?) ROUNDS=", f.read())
        if m:
            return m.group(1).split()
    except OSError:
        pass
    named = set()
    for p in glob.glob(os.path.join(d, "*-r*.csv")):
        m = re.match(r"(?:bs|plain)-(\w+)-\d+x\d+-", os.path.basename(p))
        if m:
            named.add(m.group(1))
    order = []
    for p in sorted(glob.glob(os.path.join(d, "wall-*.json"))):
        order += [res.get("api", "").lower() for res in read_json(p).get("results", [])]
    return sorted(named, key=lambda k: (order.index(k) if k in order else len(order), k))


def wall_api_count(d):
    """How many APIs the every-API runs (wall-*.json) measured."""
    counts = [len(read_json(p).get("results", [])) for p in glob.glob(os.path.join(d, "wall-*.json"))]
    return max(counts, default=0)


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return None


def plain_best(rows, discipline):
    """Best GB/s (and its block) among a plain CSV's kernel rows of one discipline."""
    best = None
    for r in rows or []:
        if r["discipline"] != discipline or not r["block"].isdigit():
            continue
        g = float(r["gbps"])
        if best is None or g > best[0]:
            best = (g, int(r["block"]))
    return best


def plain_copy(rows):
    for r in rows or []:
        if r["block"] == "copy" and r["discipline"] == "A":
            return float(r["gbps"])
    return None


def plain_by_block(rows, discipline):
    return {
        int(r["block"]): float(r["gbps"])
        for r in rows or []
        if r["discipline"] == discipline and r["block"].isdigit()
    }


def bs_rows(rows, api):
    """blocksweep's measured, verified rows of one API: {block: gbps}."""
    out = {}
    for r in rows or []:
        if r["api"] != api or r.get("skipped") or not r.get("gbps"):
            continue
        if r.get("verified", "true") != "true":
            continue
        out[r["block"]] = float(r["gbps"])
    return out


def bs_best(rows, api):
    by = bs_rows(rows, api)
    if not by:
        return None
    block = max(by, key=by.get)
    return (by[block], block)


def bs_copy(path, api):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    for res in doc.get("results", []):
        if res.get("api") == api and res.get("copy"):
            return res["copy"].get("gbps")
    return None


def fmt(v, spec="{:8.1f}"):
    return spec.format(v) if v is not None else " " * (len(spec.format(0.0)) - 1) + "-"


def ratio(a, b):
    if a is None or b is None or not b:
        return None
    return a[0] / b[0] if isinstance(a, tuple) else a / b


def read_wall(path):
    try:
        with open(path) as f:
            return float(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def read_json(path):
    """A JSON file, or {} where it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def merged_rows(path):
    """{(api, block, grid): (GB/s, per-dispatch CV)} of one every-API run's JSON."""
    doc = read_json(path)
    out = {}
    for res in doc.get("results", []):
        for r in res.get("rows", []):
            t = r.get("timing") or {}
            st = t.get("stats") or {}
            if r.get("gbps") and r.get("verified") and st.get("mean"):
                b = r["block"]
                b = b.get("x") if isinstance(b, dict) else b
                g = r.get("grid")
                g = "x".join(str(v) for v in (g["x"], g["y"]) if v != 1) or "1" if isinstance(g, dict) else g
                out[(res["api"].lower(), str(b), str(g))] = (r["gbps"], st.get("sd", 0.0) / st["mean"])
    return out


# A row of an every-API run that reads this much below the median of the same API's one-API batch
# runs (`bs-<api>-3840x2160-batch-r*.csv`: no other API in the process) for its block, or whose
# per-dispatch CV is above MAX_CV, was disturbed.
ROW_RATIO = 0.97
MAX_CV = 0.15
MODES = ("default", "overlap-close")


def one_api_medians(d, apis):
    """{(api, block, grid): median GB/s} of the one-API batch runs at 4K. The grid is part of the
    key: an API that plans alone (WebGPU, with no compute-unit count, on the covering grid) runs
    another grid than in the every-API run, where one API plans for the device."""
    acc = {}
    for api in apis:
        for p in glob.glob(os.path.join(d, f"bs-{api}-3840x2160-batch-r*.csv")):
            for r in read_csv(p) or []:
                if r["api"] != api or r.get("skipped") or not r.get("gbps"):
                    continue
                if r.get("verified", "true") != "true":
                    continue
                key = (api, str(r["block"]), str(r.get("grid", "")))
                acc.setdefault(key, []).append(float(r["gbps"]))
    return {k: statistics.median(v) for k, v in acc.items()}


def disturbed_rows(d, apis):
    """Per mode: the rows of its every-API runs disturbed against the one-API runs, and how many
    rows were compared."""
    med = one_api_medians(d, apis)
    if not med:
        return None
    out = {}
    for mode in MODES:
        bad, total = [], 0
        for i, p in enumerate(sorted(glob.glob(os.path.join(d, f"wall-{mode}-*.json")))):
            for k, (g, cv) in merged_rows(p).items():
                if k not in med:
                    continue
                total += 1
                if g < ROW_RATIO * med[k] or cv > MAX_CV:
                    bad.append(f"run {i + 1} {k[0]} {k[1]} (grid {k[2]}): {g / med[k]:.3f} of the one-API median, CV {cv:.0%}")
        if total:
            out[mode] = (bad, total)
    return out


def merged_best(path):
    """{api: best GB/s} of one every-API run's JSON (stdout of `sweep --format json`)."""
    doc = read_json(path)
    out = {}
    for res in doc.get("results", []):
        g = [r["gbps"] for r in res.get("rows", []) if r.get("gbps") and r.get("verified")]
        if g:
            out[res["api"].lower()] = max(g)
    return out


def wall_section(d, apis):
    """The whole every-API process at 4K, by default and with --overlap-close: wall times, and each
    API's best row in those runs against the plain program's best (plain A, mean of rounds)."""
    checks = []
    plain_a = {}
    n_apis = wall_api_count(d)
    every = f"{n_apis}-API"
    for api in apis:
        bests = [plain_best(read_csv(p), "A") for p in glob.glob(os.path.join(d, f"plain-{api}-3840x2160-r*.csv"))]
        bests = [b[0] for b in bests if b]
        if bests:
            plain_a[api] = statistics.mean(bests)
    print()
    for mode in MODES:
        walls, best = [], {}
        for p in sorted(glob.glob(os.path.join(d, f"wall-{mode}-*.txt"))):
            w = read_wall(p)
            if w is not None:
                walls.append(w)
            for api, g in merged_best(p[: -len(".txt")] + ".json").items():
                best.setdefault(api, []).append(g)
        if not walls:
            checks.append((f"wall <= {WALL_LIMIT_S} s ({mode})", None, None, False))
            continue
        print(
            f"wall of the whole `blocksweep sweep` process ({mode}; --device H200, {n_apis} APIs, 4K, defaults), s: "
            + " ".join(f"{w:.2f}" for w in walls)
            + f" (median {statistics.median(walls):.2f}, max {max(walls):.2f})"
        )
        for api in apis:
            if api not in best:
                continue
            r = [g / plain_a[api] for g in best[api]] if api in plain_a else []
            print(
                f"  {api}: best row GB/s in these runs " + " ".join(f"{g:.1f}" for g in best[api])
                + (f"; / plain A 4K best ({plain_a[api]:.1f}): " + " ".join(f"{x:.3f}" for x in r) if r else "")
            )
            if r and mode == "default":
                checks.append(
                    (f"{api} 3840x2160 in the {every} {mode} run: best >= {PLAIN_RATIO} x plain A best",
                     min(r), statistics.mean(r), statistics.mean(r) >= PLAIN_RATIO)
                )
        if mode == "default":
            checks.append(
                (f"wall <= {WALL_LIMIT_S} s (median of {len(walls)}, {mode})", max(walls),
                 statistics.median(walls), statistics.median(walls) <= WALL_LIMIT_S)
            )
    dist = disturbed_rows(d, apis)
    if dist:
        print(f"\nevery row of those runs against the one-API batch runs' median for its API, block and grid "
              f"(disturbed: below {ROW_RATIO} of it, or a per-dispatch CV above {MAX_CV:.0%}):")
        for mode, (bad, total) in dist.items():
            print(f"  {mode}: {len(bad)} of {total} rows disturbed")
            for b in bad[:12]:
                print(f"    {b}")
            if len(bad) > 12:
                print(f"    ... and {len(bad) - 12} more")
        if "default" in dist:
            bad, total = dist["default"]
            checks.append((f"no row of the default {every} runs disturbed ({len(bad)} of {total})",
                           None, None, not bad))
    return checks


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = argv[1]
    sizes, rounds = set(), set()
    for p in glob.glob(os.path.join(d, "*-r*.csv")):
        m = re.search(r"-(\d+x\d+)-(?:\w+-)?r(\d+)\.csv$", os.path.basename(p))
        if m:
            sizes.add(m.group(1))
            rounds.add(int(m.group(2)))
    sizes = sorted(sizes, key=lambda s: int(s.split("x")[0]) * int(s.split("x")[1]))
    rounds = sorted(rounds)
    apis = run_apis(d)
    checks = []
    print("GB/s of the best row (block in brackets); ratios are blocksweep / plain")
    for api in apis:
        for size in sizes:
            if not glob.glob(os.path.join(d, f"*-{api}-{size}-*")):
                continue  # not run (APIS left it out)
            px = int(size.split("x")[0]) * int(size.split("x")[1])
            label = f"{api} {size}"
            print(f"\n== {label}")
            print(
                "round |  plain A [blk]   bs batch [blk]  ratio | bs copy  batch/copy | "
                "plain C   bs synced  ratio | plain B  plain copy"
            )
            ratios, copy_ratios, synced_ratios = [], [], []
            per_row = {}
            for rnd in rounds:
                base = os.path.join(d, f"{{}}-{api}-{size}{{}}-r{rnd}")
                plain = read_csv(base.format("plain", "") + ".csv")
                batch = read_csv(base.format("bs", "-batch") + ".csv")
                synced = read_csv(base.format("bs", "-synced") + ".csv")
                copy = bs_copy(base.format("bs", "-batch") + ".json", api)
                pa, pb, pc = (plain_best(plain, x) for x in "ABC")
                bb, bsy = bs_best(batch, api), bs_best(synced, api)
                if plain is None and batch is None and synced is None:
                    continue
                r_ab = ratio(bb, pa)
                r_copy = bb[0] / copy if bb and copy else None
                r_sc = ratio(bsy, pc)
                for v, acc in ((r_ab, ratios), (r_copy, copy_ratios), (r_sc, synced_ratios)):
                    if v is not None:
                        acc.append(v)
                bsr = bs_rows(batch, api)
                for blk, g in plain_by_block(plain, "A").items():
                    if str(blk) in bsr and g:
                        per_row.setdefault(blk, []).append(bsr[str(blk)] / g)

                def cell(b):
                    return f"{fmt(b[0] if b else None)} [{b[1] if b else '-':>4}]"

                print(
                    f"r{rnd:<4} | {cell(pa)} {cell(bb)} {fmt(r_ab, '{:6.3f}')} | "
                    f"{fmt(copy, '{:7.1f}')}  {fmt(r_copy, '{:10.3f}')} | "
                    f"{fmt(pc[0] if pc else None)} {fmt(bsy[0] if bsy else None, '{:11.1f}')} "
                    f"{fmt(r_sc, '{:6.3f}')} | {fmt(pb[0] if pb else None)} {fmt(plain_copy(plain), '{:11.1f}')}"
                )
            if per_row:
                print(
                    "per row, bs batch / plain A (mean over rounds): "
                    + " ".join(f"{b}:{statistics.mean(v):.3f}" for b, v in sorted(per_row.items()))
                )
            if ratios:
                checks.append(
                    (
                        f"{label}: bs batch best >= {PLAIN_RATIO} x plain A best",
                        min(ratios),
                        statistics.mean(ratios),
                        statistics.mean(ratios) >= PLAIN_RATIO,
                    )
                )
            else:
                checks.append((f"{label}: bs batch best >= {PLAIN_RATIO} x plain A best", None, None, False))
            if px >= 7680 * 4320:
                checks.append(
                    (
                        f"{label}: bs batch best >= {COPY_RATIO_8K} x bs copy ceiling",
                        min(copy_ratios) if copy_ratios else None,
                        statistics.mean(copy_ratios) if copy_ratios else None,
                        bool(copy_ratios) and statistics.mean(copy_ratios) >= COPY_RATIO_8K,
                    )
                )
            if synced_ratios:
                print(
                    f"bs synced / plain C: {' '.join(f'{r:.3f}' for r in synced_ratios)} "
                    "(synced reproduces the host-wait figures when near 1)"
                )

    checks.extend(wall_section(d, apis))

    print("\nchecks (worst round, mean of rounds):")
    for name, worst, mean, ok in checks:
        w = f"{worst:.3f}" if worst is not None else "-"
        m = f"{mean:.3f}" if mean is not None else "-"
        print(f"  {'PASS' if ok else 'FAIL'}  {name}: {w}, {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
