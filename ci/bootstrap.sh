#!/usr/bin/env bash
# One-step setup on Debian 12: installs what bitgate needs (idempotent: apt
# skips what is already there), then configures and builds into build/.
# The CUDA toolkit is optional; with /usr/local/cuda present the device lanes
# and the PTX audit are built, without it the build is oracle-only.
# Usage: ci/bootstrap.sh [extra cmake arguments, e.g. -DBITGATE_SANITIZE=ON]
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium and libxml2-utils (xmllint) serve the report tests: the HTML page
# rendered headless, the JUnit XML checked against reports/schema/junit.xsd.
# python3 runs the developer scripts' tests (ci/tests: sass_model.py, timeline.py).
packages=(cmake make gcc pkg-config git libsqlite3-dev zlib1g-dev libcriterion-dev
          libmpfr-dev libgmp-dev libxxhash-dev chromium libxml2-utils python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ -z "${CUDAToolkit_ROOT:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDAToolkit_ROOT=/usr/local/cuda
fi
build_dir="${BITGATE_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build_dir" -j "$(nproc)"
echo "bootstrap: built $build_dir/bitgate"
