#!/usr/bin/env bash
# Runs an unmodified MPI program (interpose_check, linked with the MPI library only) without
# and with liblanes_mpi preloaded; both runs must compute every value right and agree on the
# checksum of all results, and LANES_MPI_STATS must show the calls lanes should have served.
#   interpose_check.sh NP NODE_SIZE PROGRAM LIBLANES_MPI [MODE]
# MODE: preload (default): LD_PRELOAD through mpirun -x; preload-env: LD_PRELOAD set for mpirun
# itself, which passes it on; colls: LANES_MPI_COLLS=bcast,alltoall,reduce_scatter_block, so the
# other collectives must be forwarded; linked: PROGRAM is linked with liblanes_mpi and runs once, with statistics;
# startup-fails: rank 1 names a rail that does not exist, so lanes cannot start on any rank: every
# collective goes to MPI, and rank 0 says why.
set -u
np=$1 node_size=$2 prog=$3 lib=$4 mode=${5:-preload}
here=$(cd "$(dirname "$0")" && pwd)
# LANES_TEST_RUN: another launcher with run_mpi.sh's arguments (slurm_check.sh: srun).
run_mpi=${LANES_TEST_RUN:-$here/../integration/run_mpi.sh}
field() { echo "$1" | grep -oE "(^| )$2=[0-9]+" | head -1 | cut -d= -f2; }
# The statistics line's fields, in the order README gives.
names="bcast scatter alltoall allgather gather allreduce reduce reduce_scatter_block barrier \
scatterv gatherv allgatherv alltoallv ibcast iscatter igather ialltoall iallgather iscatterv \
igatherv iallgatherv ialltoallv"

if [ "$mode" != linked ]; then
  plain=$("$run_mpi" "$np" "$node_size" "$prog" 2>&1) || { echo "$plain"; echo "FAIL: run without liblanes_mpi"; exit 1; }
  echo "$plain" | grep -E '^(expect|checksum|alloc_mem|interpose(_v)?_check):'
fi
colls=all
[ "$mode" = colls ] && colls=bcast,alltoall,reduce_scatter_block
if [ "$mode" = linked ]; then
  with=$(LANES_MPI_STATS=1 LANES_MPI_COLLS=$colls "$run_mpi" "$np" "$node_size" "$prog" 2>&1)
elif [ "$mode" = preload-env ]; then
  with=$(LD_PRELOAD=$lib LANES_MPI_STATS=1 LANES_MPI_COLLS=$colls \
         "$run_mpi" "$np" "$node_size" "$prog" 2>&1)
elif [ "$mode" = startup-fails ]; then
  # The wrapper sets LD_PRELOAD itself, so that the shell does not load liblanes_mpi.
  wrap=$(mktemp)
  trap 'rm -f "$wrap"' EXIT
  printf '%s\n' '#!/bin/sh' \
    '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && export LANES_RAILS=no-such-rail' \
    'LD_PRELOAD=$LANES_TEST_PRELOAD exec "$@"' >"$wrap"
  chmod +x "$wrap"
  with=$(LANES_MPI_STATS=1 LANES_TEST_PRELOAD=$lib MPIRUN_EXTRA="-x LANES_TEST_PRELOAD" \
         "$run_mpi" "$np" "$node_size" "$wrap" "$prog" 2>&1)
else
  with=$(LANES_MPI_STATS=1 LANES_MPI_COLLS=$colls MPIRUN_EXTRA="-x LD_PRELOAD=$lib" \
         "$run_mpi" "$np" "$node_size" "$prog" 2>&1)
fi
rc=$?
echo "$with" | grep -E '^(expect|checksum|alloc_mem|interpose(_v)?_check|lanes-mpi):'
[ $rc -eq 0 ] || { echo "$with"; echo "FAIL: run with liblanes_mpi (exit $rc)"; exit 1; }
echo "$with" | grep -q 'all values correct' || { echo "$with"; echo "FAIL: wrong values"; exit 1; }
if [ "$mode" != linked ]; then
  a=$(echo "$plain" | grep '^checksum:') b=$(echo "$with" | grep '^checksum:')
  [ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: results differ: '$a' without, '$b' with"; exit 1; }
fi
# MPI_Alloc_mem (interpose_check's sweep over a duplicate of MPI_COMM_WORLD): the MPI library's
# memory without lanes, every block from lanes' shared heap where lanes runs.
heap_count() { echo "$1" | sed -nE "s/^alloc_mem: ([0-9]+) of ([0-9]+) blocks.*/\1 \2/p"; }
if [ -n "$(heap_count "$with")" ]; then
  read -r in_heap blocks <<<"$(heap_count "$with")"
  want=$blocks
  [ "$mode" = startup-fails ] && want=0
  [ "$blocks" -gt 0 ] && [ "$in_heap" = "$want" ] ||
    { echo "FAIL: $in_heap of $blocks MPI_Alloc_mem blocks in lanes' heap, expected $want"; exit 1; }
  if [ "$mode" != linked ]; then
    read -r in_heap blocks <<<"$(heap_count "$plain")"
    [ "$in_heap" = 0 ] || { echo "FAIL: $in_heap MPI_Alloc_mem blocks in lanes' heap without lanes"; exit 1; }
  fi
fi

if [ "$mode" = startup-fails ]; then
  said=$(echo "$with" | grep -c '^lanes-mpi: lanes could not start: .*rank 1 of '"$np"' failed while starting up.*no-such-rail')
  [ "$said" = 1 ] || { echo "$with"; echo "FAIL: rank 0 alone must say why lanes could not start ($said lines)"; exit 1; }
  # Every call went to MPI: the fallback count is all of them.
  expect=$(echo "$with" | grep '^expect:')
  all=$(echo "$expect" | grep -oE '=[0-9]+' | tr -d = | awk '{ s += $1 } END { print s }')
  zeros=$(for c in $names; do printf '%s=0 ' "$c"; done)
  echo "$with" | grep -qE "^lanes-mpi: ${zeros}fallback=$all\$" ||
    { echo "$with"; echo "FAIL: lanes served calls although it could not start (expected fallback=$all)"; exit 1; }
  echo "interpose_check.sh: np $np node $node_size ($mode): every rank fell back to MPI, results identical"
  exit 0
fi
expect=$(echo "$with" | grep '^expect:') stats=$(echo "$with" | grep '^lanes-mpi:')
[ -n "$stats" ] || { echo "$with"; echo "FAIL: no lanes-mpi statistics line"; exit 1; }
# The line's fields, in the order README gives.
form=$(for c in $names; do printf '%s=[0-9]+ ' "$c"; done)
echo "$stats" | grep -qE "^lanes-mpi: ${form}fallback=[0-9]+\$" ||
  { echo "FAIL: statistics line '$stats' is not in the documented form"; exit 1; }
fallback=$(field "$expect" inter)
for c in $names; do
  want=$(field "$expect" "$c") got=$(field "$stats" "$c")
  want=${want:-0}  # a collective the program does not call
  if [ "$colls" = all ] || [[ ",$colls," == *",$c,"* ]]; then
    [ "$got" = "$want" ] || { echo "FAIL: lanes served $got $c calls, expected $want"; exit 1; }
  else
    [ "$got" = 0 ] || { echo "FAIL: lanes served $got $c calls with LANES_MPI_COLLS=$colls"; exit 1; }
    fallback=$((fallback + want))
  fi
done
# The inter-communicator calls, the MPI_MAXLOC and user-operation reductions, and the
# collectives not enabled went to MPI.
[ "$(field "$stats" fallback)" = "$fallback" ] ||
  { echo "FAIL: fallback=$(field "$stats" fallback), expected $fallback"; exit 1; }
echo "interpose_check.sh: np $np node $node_size ($mode): results identical, statistics as expected"
