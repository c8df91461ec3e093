#!/usr/bin/env bash
# Fuzzes relsim's parsers with libFuzzer (tests/fuzz): builds the ASan +
# UBSan tree, build-asan, whose library carries libFuzzer's coverage
# instrumentation and which holds the fuzz targets beside the tests
# (scripts/sanitize.sh asan --build), replays the kept findings
# (tests/fuzz/regressions/TARGET/*), then runs each target over a copy of its
# seed corpus (tests/fuzz/corpus/TARGET), so the committed corpus never
# grows; new units, logs and crash inputs go to build-asan/fuzz-runs/TARGET.
# Prints executions, exec/s, coverage, crashes and slow units (inputs slower
# than 10 s, kept in the artifacts but not failures) per target and exits
# non-zero if any target crashed, hung or leaked.
#
#   scripts/fuzz.sh [--total-seconds T] [--jobs J] [--build-only|--no-build] [TARGET...]
#
# T (default 420) is the fuzzing time of the whole run, split evenly between
# the targets (all of tests/fuzz/fuzz_*.cpp, or those named), at least 10 s
# each: adding a target does not lengthen the run, it shortens each share.
# Each target is one libFuzzer process on one core for its share; J of them
# (default: the number of cores) run at once, so the run takes about T / J
# seconds of wall time and every target gets the same fuzzing as one at a
# time would. --build-only stops after the build, --no-build runs what is
# built (scripts/test.sh builds build-asan while other tests run).
# A crash input reproduces with build-asan/fuzz/TARGET FILE; keep it under
# tests/fuzz/regressions/TARGET/ and as a test in tests/unit/fuzz_regression_test.cpp.
set -euo pipefail
cd "$(dirname "$0")/.."

total=420
jobs=$(nproc)
phase=all
targets=()
while (($#)); do
  case $1 in
    --total-seconds) total=${2:-}; shift 2 || { echo "fuzz.sh: --total-seconds needs a value" >&2; exit 2; } ;;
    --total-seconds=*) total=${1#--total-seconds=}; shift ;;
    --jobs) jobs=${2:-}; shift 2 || { echo "fuzz.sh: --jobs needs a value" >&2; exit 2; } ;;
    --build-only) phase=build; shift ;;
    --no-build) phase=run; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option '$1' (use --total-seconds T, --jobs J, --build-only, --no-build and target names)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if ! [[ $total =~ ^[0-9]+$ ]] || ((total < 1 || total > 604800)); then
  echo "fuzz.sh: --total-seconds '$total' is out of range: it must be an integer in [1, 604800]" >&2
  exit 2
fi
if ! [[ $jobs =~ ^[0-9]+$ ]] || ((jobs < 1 || jobs > 256)); then
  echo "fuzz.sh: --jobs '$jobs' is out of range: it must be an integer in [1, 256]" >&2
  exit 2
fi

start=$SECONDS
build=build-asan
if [[ $phase != run ]]; then
  scripts/sanitize.sh asan --build
  echo "fuzz.sh: build $((SECONDS - start)) s" >&2
  [[ $phase == build ]] && exit 0
fi

if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
# The total split evenly, never below 10 s a target.
seconds=$((total / ${#targets[@]}))
((seconds >= 10)) || seconds=10
echo "fuzz.sh: ${#targets[@]} targets, ${seconds} s each (--total-seconds $total)" >&2

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for t in "${targets[@]}"; do
  [ -x "$build/fuzz/$t" ] || { echo "fuzz.sh: no target '$t' (have: $(ls $build/fuzz | tr '\n' ' '))" >&2; exit 2; }
done

# fuzz_one TARGET: the kept findings, then the target for its share; writes
# its table row to fuzz-runs/TARGET/row and "ok" or "failed" to .../status.
fuzz_one() {
  local t=$1 exe=$build/fuzz/$1 run=$build/fuzz-runs/$1 status=ok
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/artifacts"
  cp tests/fuzz/corpus/"$t"/* "$run/corpus/"
  local args=(-timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 -print_final_stats=1
              -artifact_prefix="$run/artifacts/")
  [ -f tests/fuzz/dict/"$t".dict ] && args+=(-dict=tests/fuzz/dict/"$t".dict)

  # The kept findings first: each must pass now.
  if compgen -G "tests/fuzz/regressions/$t/*" >/dev/null; then
    if ! "$exe" "${args[@]}" tests/fuzz/regressions/"$t"/* >"$run/regressions.log" 2>&1; then
      echo "fuzz.sh: $t fails a kept finding (tests/fuzz/regressions/$t); see $run/regressions.log" >&2
      status=failed
    fi
  fi

  echo "fuzz.sh: $t for ${seconds} s" >&2
  local rc=0
  "$exe" "${args[@]}" -max_total_time="$seconds" "$run/corpus" >"$run/fuzz.log" 2>&1 || rc=$?
  stat_of() { sed -n "s/^stat::$1: *//p" "$run/fuzz.log" | tail -1; }
  cov() { grep -aE "^#[0-9]+[[:space:]]+$1 " "$run/fuzz.log" | tail -1 | sed -n 's/.* cov: \([0-9]*\).*/\1/p'; }
  # A slow unit (libFuzzer keeps any input slower than 10 s) is counted
  # apart: on a loaded 2-core machine a loopback connect can wait out
  # exhausted ephemeral ports for seconds (a 13 s unit replayed in 0.2 s).
  # An input that hangs still fails, as a timeout- artifact (-timeout=30).
  local crashes slow seeds units
  crashes=$(find "$run/artifacts" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$run/artifacts" -type f -name 'slow-unit-*' | wc -l)
  seeds=$(find tests/fuzz/corpus/"$t" -type f | wc -l)
  units=$(find "$run/corpus" -type f | wc -l)
  printf '%-22s %10s %8s %6s -> %-6s %5s -> %-6s %7s %5s\n' "$t" "$(stat_of number_of_executed_units)" \
    "$(stat_of average_exec_per_sec)" "$(cov INITED)" "$(cov DONE)" "$seeds" "$units" "$crashes" "$slow" >"$run/row"
  if ((rc != 0 || crashes > 0)); then
    status=failed
    echo "fuzz.sh: $t crashed (exit $rc); inputs in $run/artifacts, log $run/fuzz.log:" >&2
    grep -E "ERROR|SUMMARY|runtime error|deadly signal|Test unit written" "$run/fuzz.log" | head -10 >&2 || true
  fi
  echo "$status" >"$run/status"
}

# J targets at a time, each in its own process.
running=0
for t in "${targets[@]}"; do
  if ((running == jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=()
printf '%-22s %10s %8s %16s %16s %7s %5s\n' target executions exec/s "cov (edges)" "corpus (units)" crashes slow
for t in "${targets[@]}"; do
  cat "$build/fuzz-runs/$t/row" 2>/dev/null || echo "$t: no result"
  [[ $(cat "$build/fuzz-runs/$t/status" 2>/dev/null) == ok ]] || failed+=("$t")
done
echo "fuzz.sh: ${#targets[@]} targets, ${seconds} s each (--total-seconds $total), $jobs at a time, $((SECONDS - start)) s in all"
if ((${#failed[@]})); then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
