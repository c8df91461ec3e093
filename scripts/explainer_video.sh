#!/usr/bin/env bash
# Makes the explainer's video, docs/media/explainer.mp4: the workbench's
# explainer (sim/ui/web/src/explainer.js) frame by frame, 42 s at 10 frames
# a second, 1280x720, H.264. Runs `relsim ui`, opens the explainer alone in
# Debian's chromium through playwright-core, steps its time slider one frame
# at a time and pipes each screenshot to Debian's ffmpeg
# (tests/browser/record_explainer.mjs). The video is written only when the
# whole recording succeeded.
#
#   scripts/explainer_video.sh [RELSIM] [OUT]   # default build/relsim, docs/media/explainer.mp4
#
# Why the page and not a matplotlib notebook: the video is then the page's
# own animation, one drawing for both, so they cannot drift (the browser
# test compares a frame of the committed video with the page at the same
# time). Why frame stepping and not playwright's recordVideo: that needs
# playwright's own ffmpeg build, a download at run time, and films in real
# time, dropping frames on a busy machine; stepping makes every frame exact.
#
# Builds nothing: build first (scripts/build.sh). Takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
relsim=$(realpath "${1:-build/relsim}")
out=$(realpath -m "${2:-docs/media/explainer.mp4}")
ui_browser_programs=(ffmpeg ffprobe)
source scripts/ui_browser.sh
ui_browser_setup explainer_video "$relsim" harness.mjs explainer_frames.mjs record_explainer.mjs

ui_start explainer_video "$relsim"
trap 'ui_cleanup; rm -f "$out.partial.mp4"' EXIT

mkdir -p "$(dirname "$out")"
(cd "$browser_dir" && RELSIM_CHROMIUM=$(command -v chromium) node record_explainer.mjs "$ui_port" "$out")
echo "explainer_video: $out written" >&2
