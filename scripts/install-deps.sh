#!/usr/bin/env bash
# Installs the Debian packages relsim needs. Quick when they are all there
# already: apt-get runs only for what is missing.
#
#   scripts/install-deps.sh                 # what building relsim and running relsim demo need (scripts/main.sh)
#   scripts/install-deps.sh --tests         # and what the tests need: GoogleTest, Google Benchmark, Open MPI,
#                                           # Node.js and npm, chromium, ffmpeg, Jupyter (scripts/test.sh)
#   scripts/install-deps.sh [--tests] PKG...  # and these (scripts/sanitize.sh, scripts/fuzz.sh: clang and its runtimes)
#
# A package that is missing and cannot be installed (not root, or apt-get
# failed) is named on one line with the command that installs it; the exit
# code is then 1.
set -euo pipefail
build=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev libboost-math-dev libfmt-dev libcli11-dev librandom123-dev nlohmann-json3-dev
  libssl-dev  # relsim proxy: TLS to an https:// upstream
)
tests=(
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev  # tests/mpi: mpirun -np 2 relsim
  python3
  openssl  # tests/live/proxy_tls_test.cpp makes its own CA and certificate
  nodejs  # tests/sdk, tests/harnesses, tests/browser: the official SDKs and playwright-core (npm ci)
  chromium  # the browser tests (tests/browser/, label browser), driven by playwright-core from npm, which downloads no browser
  ffmpeg  # the explainer's video: scripts/explainer_video.sh encodes it, tests/browser probes it (ffprobe) and reads its frames
  jupyter-nbconvert python3-ipykernel python3-pandas python3-matplotlib  # notebooks/ (scripts/run_notebooks.sh)
  dpkg-dev  # dpkg-shlibdeps: the .deb's Depends (tests/package, cpack)
  python3-dev pybind11-dev python3-pytest python3-httpx  # python/: import relsim and its pytest plugin (tests/python)
  prometheus  # promtool: tests/live/metrics_test.cpp checks GET /metrics with `promtool check metrics`
)
# Packages whose daemon the tests never run: installed without their
# recommends (prometheus would bring node-exporter) and with services kept
# from starting (policy-rc.d), since only their tools are used.
tools_only=(prometheus)
packages=("${build[@]}")
if [[ ${1:-} == --tests ]]; then
  shift
  packages+=("${tests[@]}")
  # Debian's nodejs has no npm: that is the separate package npm. NodeSource's
  # nodejs ships npm itself and conflicts with Debian's npm, so ask for npm
  # only when there is no npm command.
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

# One line per package that is still missing, with the command that installs it.
name_missing() {
  local why=$1 p
  for p in "${missing[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      echo "install-deps: missing package $p ($why): apt-get install $p" >&2
  done
  exit 1
}
if ((EUID != 0)); then
  name_missing "not root, so not installed here"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# The build's own packages without their recommends (documentation, extra
# tools: a bare machine's first build waits for none of them); the tests'
# with them, as they have always been installed.
first=() rest=() tools=()
for p in "${missing[@]}"; do
  if [[ " ${build[*]} " == *" $p "* ]]; then first+=("$p")
  elif [[ " ${tools_only[*]} " == *" $p "* ]]; then tools+=("$p")
  else rest+=("$p"); fi
done
# Installs without recommends and with no service started: policy-rc.d
# answers 101 ("action forbidden") to invoke-rc.d while it is in place.
install_tools() {
  local policy=/usr/sbin/policy-rc.d ours=0 ok=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && ours=1
  fi
  apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null && ok=1
  ((ours == 0)) || rm -f "$policy"
  ((ok == 1))
}
if ! { apt-get update -qq &&
       { ((${#first[@]} == 0)) || apt-get install -y -qq --no-install-recommends "${first[@]}" >/dev/null; } &&
       { ((${#rest[@]} == 0)) || apt-get install -y -qq "${rest[@]}" >/dev/null; } &&
       { ((${#tools[@]} == 0)) || install_tools; }; }; then
  name_missing "apt-get failed"
fi
