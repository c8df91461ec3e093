#!/usr/bin/env bash
# Quick start, first command: install, build, run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
build/relsim exact --p 0.3 --q 0.3 --r 2 --n 2
build/relsim exact --p 0.3 --q 0.8 --r 2 --n 2 --method both
