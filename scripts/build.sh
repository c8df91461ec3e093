#!/usr/bin/env bash
# Configures (Release) and builds relsim into build/; the executable is build/relsim.
#
#   scripts/build.sh           # everything the tests need: the library, relsim, the tests (scripts/test.sh);
#                              # the benches are built by scripts/bench.sh (or --target benches)
#   scripts/build.sh --main    # the relsim executable alone (scripts/main.sh): no tests, benches or MPI needed
#
# The first configure of build/ with --main leaves the tests and benches out;
# a later plain build turns them on (and MPI, which the tests need) in the
# same folder, recompiling only what they add.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
  "") main=0 ;;
  --main) main=1 ;;
  -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "build.sh: unknown argument '$1' (use --main or nothing)" >&2; exit 2 ;;
esac
cache=build/CMakeCache.txt
if ((main)); then
  [ -f $cache ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DRELSIM_BUILD_TESTS=OFF -DRELSIM_BUILD_BENCH=OFF >/dev/null
  exec cmake --build build --parallel "$(nproc)" --target relsim
fi
# Everything: configure again only when the folder is new or was configured
# without the tests, the benches or MPI.
want=(-DRELSIM_BUILD_TESTS=ON -DRELSIM_BUILD_BENCH=ON -DRELSIM_MPI=ON)
if ! [ -f $cache ] || ! grep -q '^RELSIM_BUILD_TESTS:BOOL=ON$' $cache ||
   ! grep -q '^RELSIM_BUILD_BENCH:BOOL=ON$' $cache || ! grep -q '^RELSIM_MPI:BOOL=ON$' $cache; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${want[@]}" >/dev/null
fi
cmake --build build --parallel "$(nproc)"
