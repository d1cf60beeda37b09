#!/usr/bin/env bash
# Runs one lanes program under Open MPI's mpirun on this host and checks that nothing of lanes is
# left in /dev/shm afterwards.
#   run_mpi.sh NP NODE_SIZE PROGRAM [ARGS...]
# Environment passed through: every LANES_* variable (LANES_RAILS defaults to lo: emulated nodes
# on one host talk over loopback, so no traffic leaves the machine) and sanitizer options.
set -u
np=$1 node_size=$2; shift 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LANES_RAILS=${LANES_RAILS:-lo} LANES_NODE_SIZE=$node_size
# Open MPI's own transports stay on this host too.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
xs=()
for v in $(env | grep -oE '^(LANES|ASAN|LSAN|UBSAN)_[A-Z_]*'); do xs+=(-x "$v"); done
before=$(ls /dev/shm | grep -c '^lanes-')
timeout --kill-after=10 "${LANES_TEST_TIMEOUT:-600}" \
  mpirun -np "$np" --oversubscribe --bind-to none ${MPIRUN_EXTRA:-} "${xs[@]}" "$@"
rc=$?
after=$(ls /dev/shm | grep -c '^lanes-')
# LANES_TEST_SHM_CHECK=0: jobs run side by side, and the caller checks once they all ended.
if [ "${LANES_TEST_SHM_CHECK:-1}" != 0 ] && [ "$after" -gt "$before" ]; then
  echo "FAIL: $((after - before)) lanes segment(s) left in /dev/shm: $(ls /dev/shm | grep '^lanes-' | head -3)"
  exit 1
fi
[ $rc = 124 ] && echo "FAIL: timed out"
exit $rc
