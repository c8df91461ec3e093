#!/usr/bin/env bash
# Quick start, second command: install, build, run every test. This is what
# .ci/run runs. In order, stopping at the first failure:
#   1. the Release build's ctest, every label (unit, e2e, live, load, mpi,
#      sdk, notebooks; ctest fails when it finds no test at all);
#   2. the same suite under AddressSanitizer + UBSan, then under
#      ThreadSanitizer (scripts/sanitize.sh asan, tsan; build-asan, build-tsan);
#   3. the libFuzzer targets for 420 s in all, split evenly between them
#      (scripts/fuzz.sh; build-fuzz).
#
#   scripts/test.sh           # all three (about 40 minutes on 2 idle cores, first time)
#   scripts/test.sh --quick   # step 1 only (about 6 minutes, a minute once built)
#   scripts/test.sh --unit    # the Release build's unit label only (ctest -L unit; seconds once built)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=all
case ${1:-} in
  "") ;;
  --quick) mode=quick ;;
  --unit) mode=unit ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --quick, --unit or nothing)" >&2; exit 2 ;;
esac
scripts/install-deps.sh
scripts/build.sh
if [[ $mode == unit ]]; then
  ctest --test-dir build --output-on-failure --no-tests=error --parallel "$(nproc)" -L unit
  exit 0
fi
ctest --test-dir build --output-on-failure --no-tests=error --parallel "$(nproc)"
[[ $mode == quick ]] && exit 0
scripts/sanitize.sh asan
scripts/sanitize.sh tsan
scripts/fuzz.sh --total-seconds 420
