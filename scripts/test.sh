#!/usr/bin/env bash
# Quick start, second command: install, build, run every test. This is what
# .ci/run runs. In order, stopping at the first failure:
#   1. the Release build's ctest (ctest fails when it finds no test at all);
#   2. the same suite under AddressSanitizer + UBSan, then under
#      ThreadSanitizer (scripts/sanitize.sh asan, tsan; build-asan, build-tsan);
#   3. every libFuzzer target for 60 s (scripts/fuzz.sh; build-fuzz).
#
#   scripts/test.sh           # all three (about 40 minutes on 2 idle cores, first time)
#   scripts/test.sh --quick   # step 1 only (about 6 minutes, a minute once built)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case ${1:-} in
  "") ;;
  --quick) quick=1 ;;
  -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown argument '$1' (use --quick or nothing)" >&2; exit 2 ;;
esac
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --no-tests=error --parallel "$(nproc)"
((quick)) && exit 0
scripts/sanitize.sh asan
scripts/sanitize.sh tsan
scripts/fuzz.sh --seconds 60
