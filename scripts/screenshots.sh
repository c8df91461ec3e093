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
[[ -x $relsim ]] || { echo "screenshots: no relsim at $relsim (build it first: scripts/build.sh)" >&2; exit 2; }
for program in node npm chromium; do
  command -v "$program" >/dev/null || { echo "screenshots: $program is not on PATH (scripts/install-deps.sh)" >&2; exit 2; }
done

# The same folder and install rule as tests/browser/browser_test.cpp.
dir=$(dirname "$relsim")/browser
mkdir -p "$dir"
cp tests/browser/package.json tests/browser/package-lock.json tests/browser/check_ui.mjs "$dir/"
if [[ ! -f $dir/node_modules/playwright-core/package.json ]] || ! cmp -s "$dir/package-lock.json" "$dir/installed-package-lock.json"; then
  rm -f "$dir/installed-package-lock.json"
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$dir/installed-package-lock.json"
fi

tmp=$(mktemp -d)
ui_pid=
cleanup() {
  [[ -n $ui_pid ]] && kill "$ui_pid" 2>/dev/null && wait "$ui_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# relsim ui on a free port; its first line names it.
"$relsim" ui --port 0 >"$tmp/ui.out" &
ui_pid=$!
port=
for _ in $(seq 300); do
  port=$(sed -n 's|^relsim ui: listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/ui.out")
  [[ -n $port ]] && break
  kill -0 "$ui_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $port ]] || { echo "screenshots: relsim ui printed no 'listening on' line" >&2; exit 1; }

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
cp "$tmp/out"/ui-{bursts,lab,policies,seconds,audit,fit,tune,fleet,trend,narrow}.png docs/img/
echo "screenshots: docs/img/ui-{bursts,lab,policies,seconds,audit,fit,tune,fleet,trend,narrow}.png refreshed" >&2
