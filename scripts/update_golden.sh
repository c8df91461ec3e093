#!/usr/bin/env bash
# Regenerates the golden outputs under data/golden/ (the sweep CSV and every
# case of data/golden/cases.txt) from the current build. Run only when a
# change of output is intended, and say why in the commit. Both tests are in
# the e2e executable (tests/e2e/golden_test.cpp, sweep_test.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
RELSIM_UPDATE_GOLDEN=1 build/tests/relsim_e2e_tests --gtest_filter='Sweep.MatchesGoldenCsv:Cases/Golden.*' >/dev/null
git diff --stat -- data/golden
