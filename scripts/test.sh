#!/usr/bin/env bash
# Quick start, second command: install, build, run every test (ctest fails
# when it finds no test at all).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir build --output-on-failure --no-tests=error --parallel "$(nproc)"
