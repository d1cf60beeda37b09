#!/usr/bin/env bash
# mpirun -np 4 lanes-info with LANES_NODE_SIZE=2 must show 2 nodes of 2 ranks and each rank's rail.
set -u
run_mpi=$1 info=$2
out=$(LANES_RAILS=lo,lo "$run_mpi" 4 2 "$info" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | head -12
fail=0
echo "$out" | grep -q '^lanes: 4 ranks on 2 nodes (2,2), 2 lanes' || { echo "FAIL: summary line"; fail=1; }
for r in 0 1 2 3; do
  lane=$((r % 2))
  echo "$out" | grep -q "rank $r: local rank $lane, .*drives lane $lane (rail lo)" ||
    { echo "FAIL: rank $r's rail"; fail=1; }
done
for v in LANES_RAILS LANES_NODE_SIZE LANES_PROGRESS LANES_CHECK; do
  echo "$out" | grep -q "^$v " || { echo "FAIL: $v missing from the table"; fail=1; }
done
exit $fail
