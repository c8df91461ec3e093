#!/usr/bin/env bash
# Where the build's time goes, from ninja's own log of its last build of each
# output (BUILD/.ninja_log): the compiler time summed over every object file,
# the link time, the rest (custom commands: npm ci, esbuild, embedding), the
# compiler time of each target, and the slowest compile steps.
#
#   scripts/build_profile.sh [BUILD_DIR] [--top N]   # BUILD_DIR: build (default)
#
# The sums are of each step's own wall time, so on 2 cores the build's wall
# time is about half of them. Only the newest entry of each output counts
# (ninja appends one each time it rebuilds an output): run it after a build
# from clean to see the cost of a whole build, after an incremental one to
# see which steps the change cost (steps not rebuilt keep their old times).
set -euo pipefail
dir=build
top=10
while (($#)); do
  case $1 in
    --top) top=${2:-}; shift 2 || { echo "build_profile.sh: --top needs a value" >&2; exit 2; } ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build_profile.sh: unknown option '$1' (use BUILD_DIR and --top N)" >&2; exit 2 ;;
    *) dir=$1; shift ;;
  esac
done
[[ $top =~ ^[0-9]+$ ]] && ((top >= 1 && top <= 1000)) ||
  { echo "build_profile.sh: --top '$top' is out of range: it must be an integer in [1, 1000]" >&2; exit 2; }
log=$dir/.ninja_log
[ -f "$log" ] || { echo "build_profile.sh: no $log (build with ninja first: scripts/build.sh)" >&2; exit 2; }
exec python3 - "$log" "$top" <<'EOF'
import sys

log, top = sys.argv[1], int(sys.argv[2])
last = {}  # output -> (start ms, end ms, command hash) of its newest build step
with open(log) as f:
    header = f.readline()
    if not header.startswith("# ninja log v"):
        sys.exit(f"build_profile.sh: {log} is not a ninja log (first line {header.strip()!r})")
    for n, line in enumerate(f, start=2):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 5:
            sys.exit(f"build_profile.sh: {log} line {n} has {len(parts)} fields, not 5")
        start, end, _, output, command = parts
        last[output] = (int(start), int(end), command)
# A step with several outputs is logged once per output, with the same
# command hash: count it once, under its first output. The log keeps the
# outputs of sources since removed or renamed: only what the build makes
# today counts (ninja -t targets all).
import os
import subprocess
build_dir = os.path.dirname(os.path.abspath(log))
listed = subprocess.run(["ninja", "-C", build_dir, "-t", "targets", "all"], capture_output=True, text=True)
current = {line.rsplit(": ", 1)[0] for line in listed.stdout.splitlines()} if listed.returncode == 0 else None
stale = 0
steps = {}
for output, (start, end, command) in last.items():
    if current is not None and output not in current:
        stale += 1
        continue
    steps.setdefault((command, start, end), output)
compile_steps, link_ms, other_ms = [], 0, 0
for (_, start, end), output in steps.items():
    ms = end - start
    name = output.rsplit("/", 1)[-1]
    if name.endswith((".o", ".gch", ".pch")):
        compile_steps.append((ms, output))
    elif name.endswith((".a", ".so")) or "." not in name:
        link_ms += ms
    else:
        other_ms += ms
compile_ms = sum(ms for ms, _ in compile_steps)
wall_ms = max(end for _, _, end in steps) - min(start for _, start, _ in steps) if steps else 0
print(f"{log}: {len(compile_steps)} compile steps, compiler time {compile_ms / 1000:.0f} s, "
      f"link and archive {link_ms / 1000:.0f} s, other steps {other_ms / 1000:.0f} s, "
      f"first step to last {wall_ms / 1000:.0f} s" + (f" ({stale} outputs no longer built left out)" if stale else ""))
by_target = {}
for ms, output in compile_steps:
    target = output.split("CMakeFiles/", 1)[-1].split(".dir/", 1)[0]
    total, count = by_target.get(target, (0, 0))
    by_target[target] = (total + ms, count + 1)
print("compiler time by target:")
for target, (ms, count) in sorted(by_target.items(), key=lambda kv: -kv[1][0]):
    print(f"  {ms / 1000:7.1f} s  {count:4d} steps  {target}")
print(f"slowest {min(top, len(compile_steps))} compile steps:")
for ms, output in sorted(compile_steps, reverse=True)[:top]:
    name = output.split("CMakeFiles/", 1)[-1]
    print(f"  {ms / 1000:7.1f} s  {name}")
EOF
