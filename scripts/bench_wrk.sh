#!/usr/bin/env bash
# Healthy streams per second through the mock server alone, driven by wrk
# (issue 5): starts `relsim serve --port 0` on 127.0.0.1, gives TASKS tasks
# a script of ENTRIES "ok" replies each (POST /control/tasks/{task}/script),
# then runs wrk for DURATION at CONNECTIONS keep-alive connections on
# THREADS threads, each request a POST of the Messages body with
# "stream": true to /t/{task}/v1/messages, the tasks in turn. Prints wrk's
# report, the requests/s, and how many replies were not 200 (a script that
# ran out answers 404: raise ENTRIES). The server stops at exit.
#
# Usage: scripts/bench_wrk.sh [path/to/relsim]   (default build/relsim)
# Environment: DURATION (10s), CONNECTIONS (64), THREADS (2), SERVER_THREADS (1),
#              TASKS (16), ENTRIES (60000, at most 200000: the control body's 1 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
relsim=${1:-build/relsim}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-2}
server_threads=${SERVER_THREADS:-1}
tasks=${TASKS:-16}
entries=${ENTRIES:-60000}

for v in connections threads server_threads tasks entries; do
  if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
    echo "bench_wrk: ${v^^} = '${!v}' is not a positive integer" >&2
    exit 2
  fi
done
if ((entries > 200000)); then
  echo "bench_wrk: ENTRIES = $entries is out of range: at most 200000 (a script body is at most 1 MiB)" >&2
  exit 2
fi
if ! command -v wrk >/dev/null; then
  echo "bench_wrk: installing wrk (Debian package)" >&2
  apt-get install -y wrk >/dev/null || { echo "bench_wrk: cannot install wrk" >&2; exit 1; }
fi
[ -x "$relsim" ] || scripts/build.sh
[ -x "$relsim" ] || { echo "bench_wrk: $relsim is not an executable" >&2; exit 1; }

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$relsim" serve --port 0 --threads "$server_threads" >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
base=
for _ in $(seq 1 100); do
  base=$(sed -n 's/^relsim serve: listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$work/serve.out")
  [ -n "$base" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$base" ] || { echo "bench_wrk: the server did not say where it listens" >&2; exit 1; }

python3 -c 'import json, sys; print(json.dumps({"responses": ["ok"] * int(sys.argv[1])}))' "$entries" >"$work/script.json"
for ((t = 0; t < tasks; ++t)); do
  curl -sf -X POST -H 'content-type: application/json' --data-binary "@$work/script.json" \
    "$base/control/tasks/$t/script" >/dev/null
done

cat >"$work/post.lua" <<EOF
-- Each thread cycles through the tasks; the requests are built once.
local tasks = $tasks
local requests = {}
local turn = 0
init = function(args)
  for t = 0, tasks - 1 do
    local body = string.format(
      '{"model":"relsim-mock","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"task %d call 0"}]}', t)
    requests[t + 1] = wrk.format("POST", "/t/" .. t .. "/v1/messages",
      {["Content-Type"] = "application/json", ["Accept"] = "text/event-stream",
       ["anthropic-version"] = "2023-06-01"}, body)
  end
end
request = function()
  turn = turn % tasks + 1
  return requests[turn]
end
done = function(summary, latency, requests)
  io.write(string.format("relsim: %d requests, %d not 200, %d socket errors\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
EOF

echo "wrk: $connections connections, $threads threads, $duration, server threads $server_threads, $tasks tasks x $entries ok"
wrk -t "$threads" -c "$connections" -d "$duration" -s "$work/post.lua" "$base" | tee "$work/wrk.out"
rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)$/\1/p' "$work/wrk.out")
echo "streams/s (wrk, POST, keep-alive): $rps"
