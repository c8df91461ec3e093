#!/usr/bin/env bash
# Quick start, second command: install, build, run every test. This is what
# .ci/run runs. In order, stopping at the first failure:
#   1. the Release build's ctest, every label (unit, e2e, live, load, mpi,
#      sdk, package, harnesses, browser, wallclock, notebooks; ctest fails
#      when it finds no test at all);
#   2. the same suite under AddressSanitizer + UBSan, then under
#      ThreadSanitizer (scripts/sanitize.sh asan, tsan; build-asan, build-tsan);
#   3. the libFuzzer targets for 210 s in all, split evenly between them
#      and run two at a time (scripts/fuzz.sh; built in build-asan), in the
#      background beside the TSan tests.
# The sanitizer builds are compiled one after the other while the Release
# tests and then the ASan tests run, at the lowest CPU and I/O priority: they
# take the cycles the tests leave (the harnesses, the browser and the
# wall-clock tests spend most of their time waiting), and a test that wants a
# core gets it first. Each step prints its wall time as it ends, and the
# steps' times and the total are printed last, whether the run passed or not.
#
#   scripts/test.sh           # all three (30 minutes on 2 idle cores from a clean clone)
#   scripts/test.sh --quick   # step 1 only (about 15 minutes from clean, 8 once built)
#   scripts/test.sh --unit    # the Release build's unit label only (ctest -L unit; seconds once built)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case ${1:-} in
  "") ;;
  --quick) mode=quick ;;
  --unit) mode=unit ;;
  -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --quick, --unit or nothing)" >&2; exit 2 ;;
esac

start=$SECONDS
rows=()
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
summary() {
  printf '%s\n' "${rows[@]}" >&2
  echo "test.sh: total $(minutes $((SECONDS - start)))" >&2
}
# record NAME SECONDS STATUS: one row of the summary, printed now as well.
record() {
  rows+=("$(printf 'test.sh: %-34s %9s%s' "$1" "$(minutes "$2")" "$( (($3 == 0)) || echo "  FAILED (exit $3)")")")
  echo "${rows[-1]}" >&2
}

# The build running in the background, if any: its process group, name, log
# and start.
bg_pid="" bg_name="" bg_log="" bg_t0=0 bg_epoch=0
stop_background() {
  [ -n "$bg_pid" ] && kill -- -"$bg_pid" 2>/dev/null || true
  bg_pid=""
}
trap stop_background EXIT
fail() {
  stop_background
  summary
  exit "$1"
}
# step NAME COMMAND...: runs it, records its wall time, stops the run on failure.
step() {
  local name=$1 t0=$SECONDS status=0
  shift
  "$@" || status=$?
  record "$name" $((SECONDS - t0)) "$status"
  ((status == 0)) || fail "$status"
}
# background NAME COMMAND...: starts COMMAND (at bg_t0 by $SECONDS, bg_epoch
# by the clock, for the files it makes) in a session of its own at the
# lowest priority, its output to a log that is shown if it fails. A new
# session is a new scheduling group of its own (the kernel's autogroup), and
# groups share the CPU equally whatever their processes' nice: so the
# group's own nice is set to 19 as well, or the build would take half the
# cores from the tests (measured: two CPU-bound processes took 1.65 times as
# long beside a `setsid nice -n 19` build, and no longer beside one whose
# group was niced too).
background() {
  bg_name=$1 bg_log=build/test-logs/$(echo "$1" | tr -c 'a-z0-9\n' '-').log bg_t0=$SECONDS bg_epoch=$(date +%s)
  shift
  mkdir -p build/test-logs
  local idle=()
  command -v ionice >/dev/null && idle=(ionice -c 3)
  setsid nice -n 19 "${idle[@]}" bash -c '[ -w /proc/self/autogroup ] && echo 19 >/proc/self/autogroup; exec "$@"' \
    background "$@" >"$bg_log" 2>&1 &
  bg_pid=$!
}
# built NAME MARKER: waits until the background command has made MARKER
# (it touches it when one of its builds is done) and records that build.
built() {
  local name=$1 marker=$2
  while [ ! -e "$marker" ]; do
    if ! kill -0 "$bg_pid" 2>/dev/null; then
      join
      break
    fi
    sleep 2
  done
  [ -e "$marker" ] || { record "$name (background)" $((SECONDS - bg_t0)) 1; tail -40 "$bg_log" >&2; fail 1; }
  record "$name (background)" $(($(stat -c %Y "$marker") - bg_epoch)) 0
}
# join: waits for the background command and records it (its own wall time,
# most of it spent beside the tests).
join() {
  local status=0
  wait "$bg_pid" || status=$?
  bg_pid=""
  record "$bg_name (background)" $((SECONDS - bg_t0)) "$status"
  if ((status != 0)); then
    tail -40 "$bg_log" >&2
    fail "$status"
  fi
}
ctest_release() {
  ctest --test-dir build --output-on-failure --no-tests=error --parallel "$(nproc)" "$@"
}

# Everything at once, so that no background step waits for apt: the tests'
# packages, and clang-14 with its runtimes (ASan, UBSan, TSan, libFuzzer)
# and its OpenMP for the sanitizer builds.
extra=()
[[ $mode == all ]] && extra=(clang-14 libomp-14-dev libclang-rt-14-dev)
step install-deps scripts/install-deps.sh --tests "${extra[@]}"
step "release build" scripts/build.sh
case $mode in
  unit) step "release ctest -L unit" ctest_release -L unit ;;
  quick) step "release ctest" ctest_release ;;
  all)
    # One background command builds the ASan tree (its tests and the fuzz
    # targets), marks it done, then builds the TSan tree.
    marker=build/test-logs/asan-built
    rm -f "$marker"
    background "asan+ubsan build, then tsan build" \
      bash -c "scripts/sanitize.sh asan --build && touch $marker && scripts/sanitize.sh tsan --build"
    step "release ctest" ctest_release
    built "asan+ubsan build" "$marker"
    step "asan+ubsan ctest" scripts/sanitize.sh asan --test
    join
    # The fuzzers (ASan tree) run beside the TSan tests, at the lowest
    # priority: the tests spend part of their time waiting (load, contention
    # and live tests), and the fuzzers take those cycles instead of a
    # 2-minute step of their own. Their budget is wall time, so they fuzz
    # less while the tests run and at full speed once they end; the table
    # of executions and coverage per target is printed either way.
    background "fuzz (210 s in all)" scripts/fuzz.sh --no-build --total-seconds 210
    step "tsan ctest" scripts/sanitize.sh tsan --test
    join
    sed -n '/^target /,$p' "$bg_log" >&2
    ;;
esac
summary
