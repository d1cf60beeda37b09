#!/usr/bin/env bash
# Runs the plain MPI program examples/mpi_timing alternately without and with liblanes_mpi
# preloaded, ROUNDS times each, on this host as emulated nodes, and prints every run's times:
# the two variants share the machine's state as closely as separate runs can.
#   bench/preload_compare.sh [NP] [NODE_SIZE] [BYTES] [ROUNDS]     (defaults: 4 2 16777216 3)
# Needs a build in build/ (scripts/setup.sh). Rails: LANES_RAILS (default lo).
set -eu
np=${1:-4} node_size=${2:-2} bytes=${3:-16777216} rounds=${4:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$root/build/examples/mpi_timing lib=$root/build/mpi/liblanes_mpi.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: scripts/setup.sh" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LANES_RAILS=${LANES_RAILS:-lo} LANES_NODE_SIZE=$node_size LANES_MPI_STATS=1
common=(-np "$np" --oversubscribe --bind-to none --mca btl_tcp_if_include lo
        --mca oob_tcp_if_include lo -x LANES_RAILS -x LANES_NODE_SIZE -x LANES_MPI_STATS)
echo "# $np processes, $node_size per emulated node, $bytes bytes, rails $LANES_RAILS"
for r in $(seq 1 "$rounds"); do
  echo "## round $r: MPI library alone"
  mpirun "${common[@]}" "$prog" --bytes "$bytes" 2>&1 | grep -E '^MPI_|^data'
  echo "## round $r: with LD_PRELOAD=liblanes_mpi.so"
  mpirun "${common[@]}" -x LD_PRELOAD="$lib" "$prog" --bytes "$bytes" 2>&1 |
    grep -E '^MPI_|^data|^lanes-mpi'
done
