#!/usr/bin/env bash
# Refreshes the README's screenshots of the workbench (docs/img/ui-*.png):
# runs the browser test's own check (tests/browser/check_ui.mjs: Debian's
# chromium, headless, driven by playwright-core) against `relsim ui`, and
# copies its screenshots into docs/img/ only when every check passed, so the
# README never shows a page that fails its test.
#
#   scripts/screenshots.sh [RELSIM]   # RELSIM: a built relsim, default build/relsim
#
# Builds nothing: build first (scripts/build.sh). playwright-core comes from
# the build folder's browser/ (where ctest -L browser installed it), else
# npm ci installs the locked version there; no browser is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
relsim=$(realpath "${1:-build/relsim}")
source scripts/ui_browser.sh
ui_browser_setup screenshots "$relsim" harness.mjs check_ui.mjs
dir=$browser_dir

ui_start screenshots "$relsim"
port=$ui_port

mkdir -p "$tmp/out"
# The fit panel's log: the same generated plan as tests/browser/browser_test.cpp.
"$relsim" plan --p 0.1 --q 0.6 --n 20 --tasks 500 --seed 20261001 --max-requests 40 >"$tmp/fit_log.jsonl"
status=0
(cd "$dir" && RELSIM_CHROMIUM=$(command -v chromium) RELSIM_FIT_LOG="$tmp/fit_log.jsonl" node check_ui.mjs "$port" "$tmp/out" "$source_dir") >"$tmp/verdict.json" || status=$?
if ((status != 0)); then
  kept=$dir/out-screenshots
  rm -rf "$kept" && cp -r "$tmp/out" "$kept"
  echo "screenshots: check_ui.mjs failed (exit $status); docs/img left as it was, this run's screenshots are in $kept" >&2
  cat "$tmp/verdict.json" >&2
  exit 1
fi
mkdir -p docs/img
cp "$tmp/out"/ui-{explainer,bursts,lab,policies,seconds,audit,fit,tune,fleet,trend,narrow}.png docs/img/
echo "screenshots: docs/img/ui-{explainer,bursts,lab,policies,seconds,audit,fit,tune,fleet,trend,narrow}.png refreshed" >&2
