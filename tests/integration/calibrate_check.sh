#!/usr/bin/env bash
# lanes-calibrate on one node: 2 processes write the on-node start-up and rate and the reduction
# kernel's rate (positive, finite), no rail parameters, and a file that lanes-model reads; on two
# emulated nodes of one process (over loopback) the rail's start-up and rate; one process alone
# is refused with exit status 2 and a line that says why.
#   calibrate_check.sh RUN_MPI LANES_CALIBRATE LANES_MODEL
set -u
run_mpi=$1 calibrate=$2 model=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
"$run_mpi" 2 0 "$calibrate" --bytes 1048576 --output "$dir/one.cal" >"$dir/out.txt" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$dir/out.txt"; echo "FAIL: lanes-calibrate on 2 processes exited with $rc"; exit 1; }
cat "$dir/one.cal"
for key in alpha_shm beta_shm gamma; do
  awk -v k="$key" '$1 == k && $2 + 0 > 0 && $2 + 0 < 1 { found = 1 } END { exit !found }' \
    "$dir/one.cal" || { echo "FAIL: no positive $key below 1 s"; fail=1; }
done
grep -qE '^(alpha_rail|beta_rail|rails|rail_rates) ' "$dir/one.cal" &&
  { echo "FAIL: rail parameters written on one node"; fail=1; }
"$model" --collective allreduce --nodes 1 --ppn 2 --bytes 65536 --calibration "$dir/one.cal" \
  >"$dir/model.txt" 2>&1 || { cat "$dir/model.txt"; echo "FAIL: lanes-model refused the file"; fail=1; }
"$run_mpi" 2 1 "$calibrate" --bytes 1048576 --output "$dir/two.cal" >"$dir/two.txt" 2>&1 ||
  { cat "$dir/two.txt"; echo "FAIL: lanes-calibrate on two nodes failed"; fail=1; }
cat "$dir/two.cal"
for key in alpha_rail beta_rail; do
  awk -v k="$key" '$1 == k && $2 + 0 > 0 && $2 + 0 < 1 { found = 1 } END { exit !found }' \
    "$dir/two.cal" || { echo "FAIL: two nodes: no positive $key below 1 s"; fail=1; }
done
awk '$1 == "rail_rates" && NF == 2 && $2 + 0 > 0 { found = 1 } END { exit !found }' \
  "$dir/two.cal" || { echo "FAIL: two nodes: no rate for the one rail"; fail=1; }
"$model" --collective allreduce --nodes 4 --ppn 1 --bytes 4000000 --calibration "$dir/two.cal" \
  >"$dir/model2.txt" 2>&1 || { cat "$dir/model2.txt"; echo "FAIL: lanes-model refused two.cal"; fail=1; }
"$run_mpi" 1 0 "$calibrate" --output "$dir/alone.cal" >"$dir/alone.txt" 2>&1
rc=$?
[ $rc = 2 ] || { cat "$dir/alone.txt"; echo "FAIL: one process: exit $rc, not 2"; fail=1; }
grep -q "needs two processes on a node, or two nodes" "$dir/alone.txt" ||
  { echo "FAIL: one process: no reason given"; fail=1; }
[ -e "$dir/alone.cal" ] && { echo "FAIL: one process wrote a file"; fail=1; }
[ $fail = 0 ] && echo "ok"
exit $fail
