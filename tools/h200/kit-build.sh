#!/usr/bin/env bash
# Builds, here, the test binaries that run.sh's kit part runs on the lent H200: every test of the
# backend crates (cuda, vulkan, opencl: their unit tests, conformance kits, program tests) and of
# tests/ that use a device (cross-API, 64-bit), release, stripped, one file per binary named <crate>-<target> in
# .h1/kit/ (or $1). Carry that folder; point KIT_SRC at this checkout (tests read its sources).
#
#   tools/h200/kit-build.sh && KIT_SRC=$PWD PARTS="env kit" bash tools/h200/run.sh   # there
set -euo pipefail
cd "$(dirname "$0")/../.."
kit=${1:-.h1/kit}
rm -rf "$kit"
mkdir -p "$kit"
cargo test --release --no-run --message-format=json \
  -p blocksweep-cuda -p blocksweep-vulkan -p blocksweep-opencl -p blocksweep-tests \
  | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        crate = m["package_id"].split("#")[0].rsplit("/", 1)[-1].removeprefix("blocksweep-")
        target = m["target"]["name"].removeprefix("blocksweep_")
        kind = "lib" if "lib" in m["target"]["kind"] else target
        # Of tests/, the ones with a device in them (the Makefile, MSRV and Slurm tests are not).
        if crate != "tests" or kind in ("cross_api", "sixty_four_bit"):
            print(m["executable"], f"{crate}-{kind}")
' | while read -r exe name; do
    cp "$exe" "$kit/$name"
    strip "$kit/$name" 2>/dev/null || true
  done
ls "$kit"
