#!/usr/bin/env bash
# Start-up failures on some ranks only (4 processes, nodes of 2): a rail missing on one rank, an
# unreadable LANES_RULES on rank 0 (whose files rule everywhere), a bad variable on one rank, and
# a node whose leader cannot create the node's segment (a file-size limit stands in for a full
# /dev/shm). Every rank must fail with an error that names the failed rank, within 20 s.
#   startup_check.sh RUN_MPI STARTUP_CHECK
set -u
run_mpi=$1 prog=$2
wrap=$(mktemp)
trap 'rm -f "$wrap"' EXIT
# The failing rank gets BAD_VAR=BAD_VALUE, or (BAD_VAR=FSIZE) a 1-block file-size limit with
# SIGXFSZ ignored, so that growing the segment fails with EFBIG.
cat >"$wrap" <<'SH'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = "$BAD_RANK" ]; then
  if [ "$BAD_VAR" = FSIZE ]; then
    trap '' XFSZ
    ulimit -f 1
  else
    export "$BAD_VAR=$BAD_VALUE"
  fi
fi
exec "$@"
SH
chmod +x "$wrap"
status=0
check() { # rank variable value expected-text
  local out rc
  out=$(BAD_RANK=$1 BAD_VAR=$2 BAD_VALUE=$3 LANES_TEST_TIMEOUT=60 \
    "$run_mpi" 4 2 -x BAD_RANK -x BAD_VAR -x BAD_VALUE "$wrap" "$prog" 2>&1)
  rc=$?
  local failed slow
  failed=$(grep -c "^startup_check: rank [0-3] failed after .*rank $1 of 4 failed while .*$4" <<<"$out")
  slow=$(grep -E '^startup_check: rank [0-3] failed after' <<<"$out" |
    awk '{ if ($6 + 0 > 20) n++ } END { print n + 0 }')
  if [ $rc != 0 ] || [ "$failed" != 4 ] || [ "$slow" != 0 ]; then
    echo "FAIL: rank $1 with $2=$3: exit $rc, $failed of 4 ranks failed naming rank $1 ($4), $slow slow"
    echo "$out" | tail -8
    status=1
  else
    echo "ok: rank $1 with $2=$3: every rank failed naming it"
    grep "^startup_check: rank 0 " <<<"$out"
  fi
}
check 1 LANES_RAILS no-such-rail "no-such-rail"
check 0 LANES_RULES /nonexistent/rules.json "LANES_RULES"
check 3 LANES_TIMEOUT -5 "LANES_TIMEOUT"
check 2 FSIZE - "segment"
exit $status
