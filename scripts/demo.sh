#!/usr/bin/env bash
# The demo: bcast, scatter and alltoall through lanes next to MPI_Bcast, MPI_Scatter and
# MPI_Alltoall, on NP local processes (default 4) grouped into emulated nodes of NODE_SIZE
# (default 2), every result checked, times measured in the same run.
#   scripts/demo.sh [lanes-demo options, e.g. --sizes 1024,67108864]
#   NP=2 NODE_SIZE=2 scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
build=${LANES_BUILD_DIR:-build}
exec tests/integration/run_mpi.sh "${NP:-4}" "${NODE_SIZE:-2}" "$build/bench/lanes-demo" "$@"
