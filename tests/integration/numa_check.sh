#!/usr/bin/env bash
# On-node phases over several NUMA nodes, with a synthetic hwloc topology: this host's first two
# CPUs presented as two NUMA nodes (HWLOC_XMLFILE, HWLOC_THISSYSTEM=1) and every process bound to
# one of them (taskset), so that lanes' real hwloc discovery finds a node whose ranks span two
# NUMA nodes. Checks that lanes-info reports each rank's NUMA node as bound and the node's NUMA
# domains, that every reduction algorithm (the full-lane ones through the two-level NUMA phases)
# delivers every element right, and so do every broadcast (the hierarchical one through NUMA
# domain leaders) and every barrier (the hierarchical one domain by domain).
#   numa_check.sh RUN_MPI XML LANES_INFO COLLECTIVES_CHECK
# Binding wrapper (used by the above through mpirun):
#   numa_check.sh --bind CPUS XML PROGRAM [ARGS...]   CPUS: the CPU of each local rank, e.g. 0,0,1
set -u
if [ "${1:-}" = --bind ]; then
  IFS=, read -r -a cpus <<< "$2"
  local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:?not started by mpirun}
  export HWLOC_XMLFILE=$3 HWLOC_THISSYSTEM=1
  shift 3
  exec taskset -c "${cpus[$((local_rank % ${#cpus[@]}))]}" "$@"
fi
run_mpi=$1 xml=$2 info=$3 check=$4
self=$(readlink -f "$0")
if ! taskset -c 0 true 2> /dev/null || ! taskset -c 1 true 2> /dev/null; then
  echo "SKIP: CPUs 0 and 1 are not both available to this process"
  exit 77
fi
fail=0

# np, node size, CPU of each local rank, the NUMA node lanes must report for ranks 0..np-1.
layouts=("4 4 0,0,1,1 0,0,1,1" "4 4 0,1,0,1 0,1,0,1" "6 3 0,0,1 0,0,1,0,0,1")
for layout in "${layouts[@]}"; do
  read -r np node_size cpus expect <<< "$layout"
  echo "== $np processes on nodes of $node_size, CPUs $cpus by local rank"
  out=$(MPIRUN_EXTRA="" "$run_mpi" "$np" "$node_size" "$self" --bind "$cpus" "$xml" "$info" 2>&1)
  rc=$?
  IFS=, read -r -a numa <<< "$expect"
  if ! grep -qE "^node 0 \(host [^)]*\): $node_size ranks in 2 NUMA domains," <<< "$out"; then
    echo "FAIL: lanes-info does not show node 0's ranks in 2 NUMA domains (rc $rc):"
    echo "$out" | grep -E "^node|rror" | head -5
    fail=1
  fi
  for ((r = 0; r < np; ++r)); do
    if ! grep -qE "^  rank $r: local rank [0-9]+, numa ${numa[$r]}," <<< "$out"; then
      echo "FAIL: lanes-info does not report rank $r on NUMA node ${numa[$r]} (rc $rc):"
      echo "$out" | grep -E "^  rank|rror" | head -10
      fail=1
    fi
  done
  "$run_mpi" "$np" "$node_size" "$self" --bind "$cpus" "$xml" "$check" --algorithms all \
    --colls bcast,reduce,allreduce,reduce_scatter_block,barrier --sizes 0,1,7,1048579 || {
    echo "FAIL: collectives with CPUs $cpus at np $np, nodes of $node_size"
    fail=1
  }
done
exit $fail
