#!/usr/bin/env bash
# Measures the 1 -> 2 rank speed-up of docs/scaling.md: a simulation of 10^9
# tasks and an enumeration of length 34, one OpenMP thread per rank, each run
# `repeats` times (default 3) alternating 1 and 2 ranks so that a change in
# the machine's load hits both alike. Both sides go through mpirun, so its
# start-up (about 0.3 s) is in both. Prints wall seconds, the medians and
# their ratio, the load average before each pair, and checks that 1 and 2
# ranks print the same bytes. Needs build/relsim built with MPI.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-3}
exe=build/relsim
mpi=(mpirun --allow-run-as-root --oversubscribe --mca btl self,vader)
export OMP_NUM_THREADS=1

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

measure() {
  local name=$1; shift
  local one=() two=() out1 out2
  for ((i = 1; i <= repeats; i++)); do
    echo "$name, pair $i, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    for k in 1 2; do
      local t0 t1
      t0=$(date +%s.%N)
      "${mpi[@]}" -np "$k" "$exe" "$@" > "/tmp/relsim_measure.$k"
      t1=$(date +%s.%N)
      local s; s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
      if ((k == 1)); then one+=("$s"); else two+=("$s"); fi
      printf '  %d rank(s): %.2f s\n' "$k" "$s" >&2
    done
    cmp -s /tmp/relsim_measure.1 /tmp/relsim_measure.2 || { echo "measure_mpi: 1 and 2 ranks printed different bytes" >&2; exit 1; }
  done
  local m1 m2; m1=$(median "${one[@]}"); m2=$(median "${two[@]}")
  printf '%s | 1 rank: %s | 2 ranks: %s | median %.2f s -> %.2f s | speed-up %.2fx\n' "$name" \
    "$(printf '%.2f ' "${one[@]}")" "$(printf '%.2f ' "${two[@]}")" "$m1" "$m2" "$(awk -v a="$m1" -v b="$m2" 'BEGIN {print a / b}')"
}

measure "simulate 1e9 tasks" simulate --p 0.3 --q 0.8 --r 2 --n 2 --tasks 1000000000 --json
measure "enumerate L=34" exact --p 0.3 --q 0.8 --r 1 --n 17 --method enumerate --json
