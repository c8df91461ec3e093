#!/usr/bin/env bash
# Builds relsim with sanitizers and runs the tests under them (issue 8).
#
#   scripts/sanitize.sh asan [ctest args...]  # clang-14, AddressSanitizer + UBSan, every label but notebooks, harnesses, wallclock, browser, package and e2e;
#                                             # its tree also holds the fuzz targets (scripts/fuzz.sh)
#   scripts/sanitize.sh tsan [ctest args...]  # clang-14, ThreadSanitizer, every label but those and mpi
#   scripts/sanitize.sh all                   # both, asan first
#   scripts/sanitize.sh asan|tsan --build     # configure and build only (scripts/test.sh builds one
#   scripts/sanitize.sh asan|tsan --test      #   while the previous step's tests run); test only
#
# Extra arguments go to ctest (for example `-L unit`). The labels left out
# are not built in the tree at all (RELSIM_TEST_SKIP, tests/CMakeLists.txt):
# no compile time goes to tests that would not run. Each folder's tests run
# in 8 shards (RELSIM_TEST_SHARDS: ctest tests named LABEL.shardK, each one
# process over every 8th test), as an instrumented test executable costs
# 0.12 s of CPU to start; for one test, run its executable with
# --gtest_filter (build-asan/tests/relsim_unit_tests --gtest_filter='Enumerate.*').
# Each build has its own tree (build-asan, build-tsan), so the Release build
# in build/ is left alone. The relsim executable that the e2e, live and mpi
# tests start is sanitized too.
#
# ThreadSanitizer cannot see the futex-based barriers of GCC's libgomp, so
# every OpenMP region would be reported as a race. The TSan build therefore
# uses clang-14 with LLVM's OpenMP runtime (libomp-14-dev) and its Archer tool
# (libarcher.so, same package), which tells TSan about OpenMP's
# synchronisation; libomp loads it through OMP_TOOL_LIBRARIES below.
#
# The harnesses label (examples/harnesses/ run over 400-task plans) is left
# out of both: its runs are slow under sanitizers, and the server code they
# exercise is already covered by the live tests. The wallclock label
# (relsim live in time mode) is left out too: it holds real waits to a
# tolerance, which a 5-15x slower instrumented build cannot keep; the outage
# server's code runs under both in the live label's OutageServer tests.
# The browser label (the workbench in chromium) is left out as well: the
# page's checks are the same with or without sanitizers and chromium's start
# dominates the run; the ui server's own tests in tests/live still run under
# both. The package label (cpack and the unpacked .deb) is left out: it
# checks the Release build's package, not code a sanitizer could instrument.
# ASan leaves out e2e as well: its commands run in-process under ASan in
# the unit label's run_command tests and the python label, the command
# line's parsing is fuzz_cli_options's (under ASan and UBSan), and what the
# engines compute for them is the unit label's; the e2e tests' own checks
# are the release build's (golden bytes, exit codes, refusals). It was 136 s
# of the ASan run's test time and 33 s of its compile time, on the path of
# every CI run (the TSan build waits for the ASan tests' cores).
# TSan leaves out e2e too: those tests check the command line (options,
# refusals, golden output), and a race needs threads, which the engines,
# servers, clients and the proxy run in process in the unit, live, load and
# sdk labels, all under TSan; e2e was a third of the TSan run's time.
#
# Suppressions live in tests/sanitizers/, each with the reason it exists
# (only lsan.supp, for Open MPI; TSan needs none).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: scripts/sanitize.sh asan|tsan|all [--build|--test] [ctest args...]" >&2
  exit 2
}
(($# >= 1)) || usage
mode=$1
shift
phase=all
case ${1:-} in
  --build) phase=build; shift ;;
  --test) phase=test; shift ;;
esac

jobs=$(nproc)
supp=$PWD/tests/sanitizers

# Seconds since the epoch, for the build and test times printed at the end.
now() { date +%s; }

# configure DIR CMAKE_ARGS...: clang-14; -O1 keeps the sanitized tests fast
# enough for CI; NDEBUG stays off so RELSIM_ASSERT and assert() are checked as
# well. Debug information is line tables only: the reports' stack traces
# keep every frame, inlined ones included, with file and line, at a fraction
# of full -g's compile time. The executables are linked without PIE: an
# instrumented relsim holds about two million relative relocations (UBSan's
# type and source descriptors), which the loader would apply at every start,
# 0.3 s of every one of the suite's thousands of processes; without PIE the
# linker resolves them once. No benches: they are always Release. No Python
# module (import relsim): an instrumented module cannot load into python3,
# and its position-independent code would not match the -fno-pie headers.
configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DRELSIM_BUILD_BENCH=OFF -DRELSIM_PYTHON=OFF \
    "$@" >/dev/null
}

# run NAME DIR CTEST_ARGS...: builds DIR and runs ctest in it (the phases
# --build and --test asked for), timing each.
run() {
  local name=$1 dir=$2
  shift 2
  local t0 status=0
  if [[ $phase != test ]]; then
    t0=$(now)
    cmake --build "$dir" --parallel "$jobs" || status=$?
    printf 'sanitize %s: build %dm%02ds, exit %d\n' "$name" $((($(now) - t0) / 60)) $((($(now) - t0) % 60)) \
      "$status" >&2
    ((status == 0)) || return "$status"
  fi
  if [[ $phase != build ]]; then
    t0=$(now)
    ctest --test-dir "$dir" --output-on-failure --no-tests=error --parallel "$jobs" "$@" || status=$?
    printf 'sanitize %s: tests %dm%02ds, ctest exit %d\n' "$name" $((($(now) - t0) / 60)) $((($(now) - t0) % 60)) \
      "$status" >&2
  fi
  return "$status"
}

asan() {
  scripts/install-deps.sh --tests clang-14 libomp-14-dev libclang-rt-14-dev
  # clang-14, as for TSan: its ASan and UBSan, and libFuzzer's coverage
  # instrumentation (-DRELSIM_FUZZ=ON), so that this one tree holds both the
  # tests and the fuzz targets of scripts/fuzz.sh (build-asan/fuzz).
  # -fno-sanitize-recover makes every UBSan finding fatal, as ASan's are;
  # -fno-sanitize=function: clang 14 cannot emit that check for coroutines
  # ("Cannot represent a difference across sections", LLVM #49689);
  # _GLIBCXX_ASSERTIONS adds the bounds checks ASan cannot do (an index past
  # size() but inside a vector's capacity).
  # The library and relsim are instrumented (RELSIM_SANITIZE_FLAGS), the
  # tests' own code not: it links the instrumented library, so every call
  # into relsim's code is checked, at less than half the tests' compile time
  # (CMakeLists.txt says why).
  # Eigen picks its aligned allocator by __SANITIZE_ADDRESS__: fixed here, so
  # that a matrix made in a test and freed in the library meet the same one.
  local flags="-fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS -DEIGEN_MALLOC_ALREADY_ALIGNED=0 -fno-pie"
  [[ $phase == test ]] || configure build-asan -DCMAKE_CXX_FLAGS="$flags" -DRELSIM_FUZZ=ON \
    -DRELSIM_TEST_SKIP="notebooks;harnesses;wallclock;browser;package;e2e" -DRELSIM_TEST_SHARDS=8 \
    -DRELSIM_SANITIZE_FLAGS="-fsanitize=address,undefined -fno-sanitize=function -fno-sanitize-recover=undefined" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -no-pie" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
  local args=("$@")
  local asan_options=detect_leaks=1:abort_on_error=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1
  # The Mpi tests' ranks (mpirun relsim ...): Open MPI sets the variables of
  # mca_base_env_list in each rank only. The slow unwinder there gives leak
  # stacks that reach MPI_Init_thread through libmpi (built without frame
  # pointers), so tests/sanitizers/lsan.supp can match them; keeping MPI's
  # plugins loaded keeps their frames symbolized.
  OMPI_MCA_mca_base_env_list="ASAN_OPTIONS=$asan_options:fast_unwind_on_malloc=0" \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ASAN_OPTIONS=$asan_options \
    LSAN_OPTIONS=suppressions=$supp/lsan.supp:print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    OMP_NUM_THREADS=2 \
    run asan build-asan "${args[@]}"
}

tsan() {
  scripts/install-deps.sh --tests clang-14 libomp-14-dev libclang-rt-14-dev
  local flags="-fsanitize=thread -fno-omit-frame-pointer -fno-pie"
  [[ $phase == test ]] || configure build-tsan -DCMAKE_CXX_FLAGS="$flags" \
    -DRELSIM_TEST_SKIP="notebooks;harnesses;wallclock;browser;package;mpi;e2e" -DRELSIM_TEST_SHARDS=8 \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread -no-pie" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
  # The mpi label is left out: Open MPI (uninstrumented) runs its own
  # progress threads in each rank, which TSan cannot follow; the ranks
  # themselves are processes and share no memory.
  local args=("$@")
  # OMP_NUM_THREADS=4 on two cores so OpenMP regions really run threads
  # side by side (tests that set their own thread count keep it).
  # ignore_noninstrumented_modules: libomp's own bookkeeping (its locks,
  # its allocator) is not instrumented; Archer asks for this option so that
  # only accesses from instrumented code (relsim, the tests) are reported.
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:ignore_noninstrumented_modules=1" \
    OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so \
    OMP_NUM_THREADS=4 \
    run tsan build-tsan "${args[@]}"
}

case $mode in
  asan) asan "$@" ;;
  tsan) tsan "$@" ;;
  all)
    status=0
    asan "$@" || status=$?
    tsan "$@" || status=$?
    exit "$status"
    ;;
  *) usage ;;
esac
