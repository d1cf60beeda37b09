#!/usr/bin/env bash
# Runs the plain MPI program examples/mpi_timing alternately without and with liblanes_mpi
# preloaded, ROUNDS times each, and prints every run's times: the two variants share the
# machine's state as closely as separate runs can.
#   bench/preload_compare.sh [NP] [NODE_SIZE] [BYTES] [ROUNDS]     (defaults: 4 2 16777216 3)
# On this host the nodes are emulated with LANES_NODE_SIZE (rails: LANES_RAILS, default lo).
# With TESTBED=RATE (root), the processes run on the emulated cluster of bench/testbed instead,
# NP/NODE_SIZE nodes with 2 rails of RATE each, and Open MPI uses the same two rails.
# Needs a build in build/ (scripts/setup.sh).
set -eu
np=${1:-4} node_size=${2:-2} bytes=${3:-16777216} rounds=${4:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$root/build/examples/mpi_timing lib=$root/build/mpi/liblanes_mpi.so
testbed=$root/bench/testbed/lanes-testbed
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: scripts/setup.sh" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 LANES_MPI_STATS=1
if [ -n "${TESTBED:-}" ]; then
  trap '"$testbed" down >/dev/null 2>&1 || true' EXIT
  "$testbed" up $((np / node_size)) 2 "$TESTBED" >/dev/null
  launch=("$testbed" mpirun -np "$np" -npernode "$node_size" --mca pml ob1
          --mca btl tcp,vader,self -x LANES_PROGRESS=wait)
  echo "# $np processes on $((np / node_size)) testbed nodes, 2 rails of $TESTBED, $bytes bytes"
else
  export LANES_RAILS=${LANES_RAILS:-lo} LANES_NODE_SIZE=$node_size
  launch=(mpirun -np "$np" --oversubscribe --bind-to none --mca btl_tcp_if_include lo
          --mca oob_tcp_if_include lo -x LANES_RAILS -x LANES_NODE_SIZE)
  echo "# $np processes, $node_size per emulated node, $bytes bytes, rails $LANES_RAILS"
fi
for r in $(seq 1 "$rounds"); do
  echo "## round $r: MPI library alone"
  "${launch[@]}" "$prog" --bytes "$bytes" 2>&1 | grep -E '^MPI_|^data'
  echo "## round $r: with LD_PRELOAD=liblanes_mpi.so"
  "${launch[@]}" -x LANES_MPI_STATS -x LD_PRELOAD="$lib" "$prog" --bytes "$bytes" 2>&1 |
    grep -E '^MPI_|^data|^lanes-mpi'
done
