#!/usr/bin/env bash
# LANES_HIERARCHY_GROUPS: the hierarchical-<base> reduces and the hierarchical allreduce with the
# number of groups searched (each settles on a G, every element checked before and after), rank 0's setting against the
# others', a fixed G, and a G whose groups do not tile the nodes (every rank fails the call,
# naming the valid ones, none waits).
#   group_search_check.sh PROGRAM   (collectives_check)
set -u
program=$1
here=$(cd "$(dirname "$0")" && pwd)
run() { "$here/run_mpi.sh" 4 2 "$program" "$@" 2>&1; }
fail() { echo "FAIL: $*"; exit 1; }

out=$(LANES_HIERARCHY_GROUPS=search LANES_INFO=1 run --colls reduce,allreduce --algorithms all \
  --repeat 5 --sizes 0,7,70001,1048579)
rc=$?
echo "$out" | grep -E "groups searched|collectives_check|FAIL" | head -30
[ $rc = 0 ] || { echo "$out" | tail -20; fail "the search run failed ($rc)"; }
for base in linear chain binary binomial in-order-binary rabenseifner; do
  echo "$out" | grep -qE "^lanes: groups searched for reduce hierarchical-$base of .*; G = [12]\$" ||
    fail "hierarchical-$base settled on no G"
done
echo "$out" | grep -qE "^lanes: groups searched for allreduce hierarchical of .*; G = [124]\$" ||
  fail "the hierarchical allreduce settled on no G"

# Rank 0 searches and the others were told the model's G: rank 0's setting holds everywhere.
out=$(LANES_INFO=1 "$here/run_mpi.sh" 1 2 env LANES_HIERARCHY_GROUPS=search "$program" \
  --colls reduce --algorithms all --repeat 3 --sizes 7,70001 : \
  -np 3 env LANES_HIERARCHY_GROUPS=model "$program" --colls reduce --algorithms all --repeat 3 \
  --sizes 7,70001 2>&1)
rc=$?
[ $rc = 0 ] || { echo "$out" | tail -20; fail "the run with rank 0 alone searching failed ($rc)"; }
[ "$(echo "$out" | grep -c '^lanes: groups searched for reduce')" -ge 12 ] ||
  fail "rank 0's LANES_HIERARCHY_GROUPS=search did not hold everywhere"

out=$(LANES_HIERARCHY_GROUPS=2 LANES_INFO=1 LANES_REDUCE_ALGORITHM=hierarchical-chain run \
  --colls reduce --sizes 7,70001)
rc=$?
[ $rc = 0 ] || { echo "$out" | tail -20; fail "the G = 2 run failed ($rc)"; }
echo "$out" | grep -qE "^lanes: reduce of [0-9]+ bytes.*: hierarchical-chain with 2 groups\$" ||
  fail "LANES_HIERARCHY_GROUPS=2 did not run 2 groups"

# mpirun lets every rank end by itself, so that each one's error shows (and then exits 0).
out=$(MPIRUN_EXTRA="--mca orte_abort_on_non_zero_status 0" LANES_HIERARCHY_GROUPS=3 \
  LANES_REDUCE_ALGORITHM=hierarchical-chain run --colls reduce --sizes 7)
rc=$?
[ $rc = 124 ] && fail "LANES_HIERARCHY_GROUPS=3 hung"
[ "$(echo "$out" | grep -c '3 groups do not tile 4 ranks in nodes of their size (valid: 1, 2)')" -ge 4 ] ||
  { echo "$out" | tail -20; fail "not every rank named the valid numbers of groups"; }
echo "searched, fixed and invalid numbers of groups behave"
