# Sourced by scripts/screenshots.sh and scripts/explainer_video.sh: the
# browser folder and a running `relsim ui`, as tests/browser/browser_test.cpp
# has them. Not run on its own.
#
#   ui_browser_setup NAME RELSIM FILE...   # checks for node, npm, chromium and ${ui_browser_programs[@]};
#                                          # sets $browser_dir: RELSIM's folder's browser/, with
#                                          # tests/browser/{package.json,package-lock.json,FILE...}
#                                          # and playwright-core (npm ci when the lock changed)
#   ui_start NAME RELSIM                   # makes $tmp (removed on exit), starts RELSIM ui --port 0
#                                          # (stopped on exit); sets $ui_port
#
# NAME prefixes the one-line errors. Nothing here downloads a browser:
# playwright-core drives the chromium on PATH.

ui_browser_setup() {
  local name=$1 relsim=$2
  shift 2
  [[ -x $relsim ]] || { echo "$name: no relsim at $relsim (build it first: scripts/build.sh)" >&2; exit 2; }
  local program
  for program in node npm chromium ${ui_browser_programs[@]+"${ui_browser_programs[@]}"}; do
    command -v "$program" >/dev/null || { echo "$name: $program is not on PATH (scripts/install-deps.sh --tests)" >&2; exit 2; }
  done
  browser_dir=$(dirname "$relsim")/browser
  mkdir -p "$browser_dir"
  local file
  for file in package.json package-lock.json "$@"; do cp "tests/browser/$file" "$browser_dir/"; done
  if [[ ! -f $browser_dir/node_modules/playwright-core/package.json ]] ||
     ! cmp -s "$browser_dir/package-lock.json" "$browser_dir/installed-package-lock.json"; then
    rm -f "$browser_dir/installed-package-lock.json"
    (cd "$browser_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    cp "$browser_dir/package-lock.json" "$browser_dir/installed-package-lock.json"
  fi
}

ui_start() {
  local name=$1 relsim=$2
  tmp=$(mktemp -d)
  ui_pid=
  trap ui_cleanup EXIT
  "$relsim" ui --port 0 >"$tmp/ui.out" &
  ui_pid=$!
  ui_port=
  for _ in $(seq 300); do
    ui_port=$(sed -n 's|^relsim ui: listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$tmp/ui.out")
    [[ -n $ui_port ]] && break
    kill -0 "$ui_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n $ui_port ]] || { echo "$name: relsim ui printed no 'listening on' line" >&2; exit 1; }
}

ui_cleanup() {
  [[ -n ${ui_pid:-} ]] && kill "$ui_pid" 2>/dev/null && wait "$ui_pid" 2>/dev/null
  rm -rf "$tmp"
}
