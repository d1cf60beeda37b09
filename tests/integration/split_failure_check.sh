#!/usr/bin/env bash
# A split whose node segment cannot be created on node leader BAD_RANK (4 processes, nodes of 2):
# every rank must fail the split within 20 s with an error naming that rank and the segment's
# creation, then broadcast on the world and on a new split as if nothing had happened.
#   split_failure_check.sh RUN_MPI SPLIT_FAILURE_CHECK
set -u
run_mpi=$1 prog=$2
status=0
for bad in 0 2; do
  out=$(BAD_RANK=$bad LANES_TEST_TIMEOUT=60 "$run_mpi" 4 2 -x BAD_RANK "$prog" 2>&1)
  rc=$?
  failed=$(grep -c "^split_failure_check: rank [0-3] failed after .*rank $bad of 4 failed while creating its node's shared-memory segment" <<<"$out")
  slow=$(grep -E '^split_failure_check: rank [0-3] failed after' <<<"$out" |
    awk '{ if ($6 + 0 > 20) n++ } END { print n + 0 }')
  fine=$(grep -c '^split_failure_check: rank [0-3] world and a later split ok$' <<<"$out")
  if [ $rc != 0 ] || [ "$failed" != 4 ] || [ "$slow" != 0 ] || [ "$fine" != 4 ]; then
    echo "FAIL: leader $bad: exit $rc, $failed of 4 failed naming it, $slow slow, $fine of 4 fine after"
    echo "$out" | tail -12
    status=1
  else
    echo "ok: leader $bad cannot create the split's segment: every rank failed naming it, then the world and a new split worked"
    grep "^split_failure_check: rank 1 failed" <<<"$out"
  fi
done
exit $status
