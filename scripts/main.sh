#!/usr/bin/env bash
# Quick start, first command: install, build, run the main job: the
# reference experiment (docs/model.md, Reference experiment) exactly, by simulation and live.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
build/relsim demo
