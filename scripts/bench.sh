#!/usr/bin/env bash
# The benchmark table: runs the programs of bench/ (build/bench/bench_*, each
# timing its own baseline in the same run), writes one JSON line per ratio
# to data/bench/MACHINE.jsonl (MACHINE: this CPU's kind, e.g.
# amd-epyc-family-26-model-2-2-cores-x86-64-v4), replacing that machine
# kind's previous lines, and regenerates docs/performance.md from every
# machine kind's file (scripts/bench_table.py says what a line holds).
#
#   scripts/bench.sh                  # every program (about 10 minutes on 2 cores)
#   scripts/bench.sh bench_simulate   # only these programs; the others' lines stay
#   scripts/bench.sh --doc            # docs/performance.md from data/bench/ alone
#
# Builds the programs first (Release, build/). Progress (each program as it
# starts, Google Benchmark's own table) goes to stderr. Close other work
# first: the ratios hold against a baseline in the same run, but a machine
# busy with something else makes both sides noisy.
set -euo pipefail
cd "$(dirname "$0")/.."

doc_only=0
programs=()
for arg in "$@"; do
  case $arg in
    --doc) doc_only=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    bench_*) programs+=("$arg") ;;
    *) echo "bench.sh: unknown argument '$arg' (a program such as bench_simulate, --doc or --help)" >&2; exit 2 ;;
  esac
done

mkdir -p data/bench
regenerate() {
  local tmp files
  shopt -s nullglob
  files=(data/bench/*.jsonl)
  shopt -u nullglob
  if ((${#files[@]} == 0)); then
    echo "bench.sh: no data/bench/*.jsonl yet: run scripts/bench.sh first" >&2
    exit 1
  fi
  tmp=$(mktemp docs/performance.md.XXXXXX)
  python3 scripts/bench_table.py doc "${files[@]}" >"$tmp" || { rm -f "$tmp"; exit 1; }
  mv "$tmp" docs/performance.md
  echo "bench.sh: docs/performance.md regenerated" >&2
}
if ((doc_only)); then
  regenerate
  exit 0
fi

if ((${#programs[@]} == 0)); then
  for src in bench/bench_*.cpp; do programs+=("$(basename "$src" .cpp)"); done
fi
for p in "${programs[@]}"; do
  [ -f "bench/$p.cpp" ] || { echo "bench.sh: no program '$p' in bench/" >&2; exit 2; }
done
[ -f build/CMakeCache.txt ] || scripts/build.sh >&2
cmake --build build --target "${programs[@]}" >&2

runs=$(mktemp -d)
trap 'rm -rf "$runs"' EXIT
for p in "${programs[@]}"; do
  echo "bench.sh: $p" >&2
  "build/bench/$p" --benchmark_out="$runs/$p.json" --benchmark_out_format=json >&2
done

# The machine's file: its old lines for programs not run now, then the new ones.
machine=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import bench_table, re
print(re.sub(r"[^a-z0-9]+", "-", bench_table.machine()["kind"].lower()).strip("-"))')
out=data/bench/$machine.jsonl
python3 scripts/bench_table.py lines "$runs/new.jsonl" "$runs"/*.json
{
  if [ -f "$out" ]; then
    python3 -c 'import json, sys
ran = set(sys.argv[2:])
for line in open(sys.argv[1]):
    if line.strip() and json.loads(line)["bench"] not in ran:
        sys.stdout.write(line)' "$out" "${programs[@]}"
  fi
  cat "$runs/new.jsonl"
} >"$runs/all.jsonl"
mv "$runs/all.jsonl" "$out"
echo "bench.sh: $(wc -l <"$out") lines in $out" >&2
regenerate
