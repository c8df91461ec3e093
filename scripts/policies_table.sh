#!/usr/bin/env bash
# Prints the policy comparison table of docs/policies.md: for each fault mix,
# each policy's exact success, mean and worst-case requests per task, and
# P(wrong outcome), from `relsim exact --policy ... --json`.
# Usage: scripts/policies_table.sh [path/to/relsim]
set -euo pipefail
relsim=${1:-build/relsim}
model=(--p 0.3 --q 0.8 --r 2 --n 2 --s 2 --B 4)
for kinds in cut=1,no_stop=1,malformed=1,overloaded=1,stall=1 cut=1,stall=1,slow_headers=2,http_529=1,overloaded=1; do
  echo
  echo "kinds $kinds"
  echo
  echo "| policy | P(success) | mean requests | worst case | P(wrong) | wrong outcomes |"
  echo "|---|---|---|---|---|---|"
  for policy in simple naive layered budgeted; do
    "$relsim" exact "${model[@]}" --policy "$policy" --kinds "$kinds" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
wrong = ", ".join(f"{k} {v:.4f}" for k, v in d["outcomes"].items() if k.split(":")[0] in ("crash", "hang", "partial_done")) or "none"
print("| %s | %.6f | %.4f | %d | %.6f | %s |" % (d["policy"], d["success"], d["mean_requests"], d["max_requests"], d["wrong"], wrong))'
  done
done
