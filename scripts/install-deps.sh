#!/usr/bin/env bash
# Installs every Debian package relsim's build and tests need. Quick when
# they are all there already: apt-get runs only for what is missing.
# Arguments name extra packages (scripts/sanitize.sh passes the clang and
# OpenMP runtime its ThreadSanitizer build needs).
set -euo pipefail
packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libboost-math-dev libfmt-dev libcli11-dev librandom123-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev
  python3
  nodejs  # tests/sdk/sdk_test.cpp runs the official TypeScript SDK (npm ci installs it into build/sdk)
  chromium  # the browser tests (tests/browser/, label browser), driven by playwright-core from npm, which downloads no browser
  jupyter-nbconvert python3-ipykernel python3-pandas python3-matplotlib  # notebooks/ (scripts/run_notebooks.sh)
)
packages+=("$@")
# Debian's nodejs has no npm: that is the separate package npm. NodeSource's
# nodejs ships npm itself and conflicts with Debian's npm, so ask for npm only
# when there is no npm command.
command -v npm >/dev/null 2>&1 || packages+=(npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
