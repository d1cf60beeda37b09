#!/usr/bin/env bash
# One rank is killed with SIGKILL in the middle of 64 MiB broadcasts: every survivor must report a
# lanes::Error within the bound, fail its next call at once and finalize, and /dev/shm must hold
# nothing of lanes afterwards.
#   kill_check.sh PROGRAM NP NODE_SIZE VICTIM     (KILL_CHECK_ARGS: more kill_check options)
# With --stop in KILL_CHECK_ARGS the victim is stopped and continued instead: every rank, the
# victim included, must report an error, and all of them a timeout (set LANES_TIMEOUT).
set -u
prog=$1 np=$2 node_size=$3 victim=$4
here=$(cd "$(dirname "$0")" && pwd)
# Recovery mode: mpirun lets the survivors run on instead of killing them at once.
out=$(MPIRUN_EXTRA="--mca orte_enable_recovery true" LANES_TEST_TIMEOUT=120 \
      "$here/run_mpi.sh" "$np" "$node_size" "$prog" --victim "$victim" --bound-s 20 ${KILL_CHECK_ARGS:-} 2>&1)
rc=$?
echo "$out" | grep -E 'kill_check|FAIL'
expected=$((np - 1))
[[ " ${KILL_CHECK_ARGS:-} " == *" --stop "* ]] && expected=$np
survivors=$(echo "$out" | grep -c "after the kill")
if [ "$survivors" -ne $expected ]; then
  echo "$out"
  echo "FAIL: $survivors of $expected survivors reported an error"
  exit 1
fi
if [ $expected = "$np" ] && [ "$(echo "$out" | grep -c "got 'timeout'")" -ne "$np" ]; then
  echo "$out"
  echo "FAIL: not every rank reported a timeout"
  exit 1
fi
finished=$(echo "$out" | grep -c "finalize took")
if [ "$finished" -ne $expected ]; then
  echo "$out"
  echo "FAIL: $finished of $expected survivors went on to a second call and finalized"
  exit 1
fi
# The victim's death makes mpirun's own exit code non-zero: judge by what the survivors print.
echo "$out" | grep -qE 'FAIL|LATE' && { echo "(mpirun exit code $rc)"; exit 1; }
if [ "${LANES_TEST_SHM_CHECK:-1}" != 0 ] && ls /dev/shm | grep -q '^lanes-'; then echo "FAIL: lanes segments left in /dev/shm"; exit 1; fi
echo "kill_check: all $survivors survivors failed cleanly"
