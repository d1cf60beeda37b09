#!/usr/bin/env bash
# Installs what lanes needs (Debian 12 packages, idempotent), then configures and builds it.
#   scripts/setup.sh            build into ./build (LANES_BUILD_DIR overrides)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ meson ninja-build pkg-config git cmake procps
  libucx-dev ucx-utils            # UCX: one context per rail
  libpmix-dev libpmix-bin         # PMIx bootstrap
  libopenmpi-dev openmpi-bin      # mpirun (a PMIx server), MPI bootstrap, tests and the demo
  libhwloc-dev hwloc libnuma-dev  # topology
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev
  clang-format iproute2 iperf3 python3 python3-matplotlib
  clang libclang-rt-14-dev          # the fuzz targets (libFuzzer)
  slurmctld slurmd slurm-client munge   # the Slurm test (srun --mpi=pmix)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

build=${LANES_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dwerror=true
fi
ninja -C "$build"
