#!/usr/bin/env bash
# Quick start, first command: install what the build needs, build the relsim
# executable alone, run the main job: the reference experiment
# (docs/model.md, Reference experiment) exactly, by simulation and live.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --main >&2  # its progress on stderr, the demo alone on stdout
build/relsim demo
