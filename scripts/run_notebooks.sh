#!/usr/bin/env bash
# Executes every notebooks/*.ipynb headless and fails on the first error.
#
#   scripts/run_notebooks.sh [RELSIM] [--inplace]
#
# RELSIM is the relsim executable (default: $RELSIM, else build/relsim). The
# notebooks run relsim's commands in-process through `import relsim`, the
# package the build puts beside it (build/python/, docs/python.md), and the
# executable itself where a program must run apart; they write their CSVs to
# data/notebooks/ and their figures to notebooks/figures/ (or both under
# $RELSIM_NB_OUT when that is set; ctest sets
# it to a folder in the build tree so a test run leaves the sources alone).
# ctest also sets RELSIM_NB_SMOKE=1: a notebook whose figure rests on many
# replicate runs runs fewer (04: 40 seeds a point instead of 200).
#
# By default the executed notebooks go to a temporary folder and are thrown
# away, so the notebooks in the repository (kept without outputs) do not churn;
# --inplace writes the executed notebooks, outputs included, over the originals.
# Needs jupyter nbconvert, ipykernel, pandas and matplotlib
# (scripts/install-deps.sh); exits 77 (ctest: skipped) when they are missing,
# or 1 under CI=true (CI must run everything), with the reason on one line.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
inplace=0
exe=""
for arg in "$@"; do
  case $arg in
    --inplace) inplace=1 ;;
    -h | --help) sed -n '2,21s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "run_notebooks: unknown option $arg" >&2; exit 2 ;;
    *) exe=$arg ;;
  esac
done
exe=${exe:-${RELSIM:-$root/build/relsim}}
if [[ ! -x $exe ]]; then
  echo "run_notebooks: no relsim executable at $exe (build it first: scripts/build.sh)" >&2
  exit 2
fi
export RELSIM
RELSIM=$(realpath "$exe")
if [[ ! -f $(dirname "$RELSIM")/python/relsim/__init__.py ]]; then
  echo "run_notebooks: no Python package beside $RELSIM (python/relsim/): build it with scripts/build.sh, which makes it with the tests" >&2
  exit 2
fi

# The kernel is the system Python's (Debian packages); check that it has what the notebooks import.
missing=()
command -v jupyter >/dev/null && jupyter nbconvert --version >/dev/null 2>&1 || missing+=("jupyter nbconvert")
for module in ipykernel pandas matplotlib; do
  /usr/bin/python3 -c "import $module" 2>/dev/null || missing+=("python3 $module")
done
if ((${#missing[@]})); then
  reason="missing $(IFS=,; echo "${missing[*]}" | sed 's/,/, /g') (run scripts/install-deps.sh --tests)"
  if [[ ${CI:-} == true ]]; then
    echo "run_notebooks: FAILED under CI=true: $reason" >&2
    exit 1
  fi
  echo "run_notebooks: skipped: $reason" >&2
  exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JUPYTER_RUNTIME_DIR=$tmp/runtime   # kernel connection files
export PYDEVD_DISABLE_FILE_VALIDATION=1   # quiets ipykernel's debugger notice
[[ -w ${HOME:-/nonexistent} ]] || export HOME=$tmp MPLCONFIGDIR=$tmp/mpl IPYTHONDIR=$tmp/ipython

shopt -s nullglob
notebooks=("$root"/notebooks/*.ipynb)
((${#notebooks[@]})) || { echo "run_notebooks: no notebooks in $root/notebooks" >&2; exit 1; }
total=$SECONDS
for nb in "${notebooks[@]}"; do
  start=$SECONDS
  if ((inplace)); then
    where=(--inplace)
  else
    where=(--output-dir "$tmp/out")
  fi
  # The kernel runs in the notebook's own folder, whatever the output location.
  if ! jupyter nbconvert --to notebook --execute "${where[@]}" \
       --ExecutePreprocessor.timeout=600 --log-level=WARN "$nb" 2>"$tmp/log"; then
    sed 's/\x1b\[[0-9;]*m//g' "$tmp/log" | grep -v -e 'frozen modules' -e 'Debugger warning' -e 'make the debugger miss' >&2 || true
    echo "run_notebooks: FAILED $(basename "$nb")" >&2
    exit 1
  fi
  echo "run_notebooks: $(basename "$nb") ok ($((SECONDS - start)) s)"
done
echo "run_notebooks: ${#notebooks[@]} notebooks ok in $((SECONDS - total)) s (relsim: $RELSIM)"
