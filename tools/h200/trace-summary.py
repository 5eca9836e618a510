#!/usr/bin/env python3
"""Sums BLOCKSWEEP_TRACE lines per (scope, phase): where a run's wall time went.

Usage: trace-summary.py DIR, for the *-trace-*.txt files there (tools/h200/run.sh, part
progtrace). Spans nest (a sweep's span holds its rows' spans), so the sums of one file add up
to more than its wall time; read each line against its scope's enclosing span.
"""
import collections
import pathlib
import re
import sys

LINE = re.compile(r"blocksweep trace\s+[\d.]+ ms\s+(\S+) (.+): ([\d.]+) ms$")


def summary(path):
    total = collections.defaultdict(lambda: [0.0, 0])
    wall = ""
    for line in path.read_text(errors="replace").splitlines():
        m = LINE.match(line.strip())
        if m:
            scope, phase, ms = m.group(1), m.group(2), float(m.group(3))
            t = total[(scope, phase)]
            t[0] += ms
            t[1] += 1
        elif line.endswith("s wall"):
            wall = line
    print(f"== {path.name}: {wall}")
    for (scope, phase), (ms, n) in sorted(total.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"  {ms:9.1f} ms  {n:4d} x  {scope} {phase}")


def main():
    d = pathlib.Path(sys.argv[1])
    for p in sorted(d.glob("*-trace-*.txt")):
        summary(p)


if __name__ == "__main__":
    main()
