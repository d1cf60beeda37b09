#!/usr/bin/env bash
# lanes-bench --check on 3 processes as nodes of 2 and 1: every repetition's result verified (with
# a settling call of the same variant before each, --settle 1), and the CSV holds the header and,
# per collective and count, the MPI library's row and lanes rows; then --memory shared, checked too.
#   bench_check.sh RUN_MPI LANES_BENCH
set -u
run_mpi=$1 bench=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
counts=0,1,1000,70000
"$run_mpi" 3 2 "$bench" --check --collective bcast,scatter,alltoall,allgather,allreduce,reduce \
  --counts "$counts" --reps 3 --warmup 1 --settle 1 --csv "$dir/b.csv" \
  >"$dir/out.md" 2>"$dir/err.txt"
rc=$?
cat "$dir/out.md"
if [ $rc != 0 ]; then
  cat "$dir/err.txt"
  echo "FAIL: lanes-bench exited with $rc"
  exit 1
fi
fail=0
header=$(head -1 "$dir/b.csv")
[ "$header" = "collective,impl,algorithm,lanes,nodes,ppn,count,bytes,avg_us,min_us,median_us" ] ||
  { echo "FAIL: CSV header is '$header'"; fail=1; }
# Every row: 11 fields, 2 nodes of up to 2, bytes = 4 * count, times not negative, the minimum
# no larger than the average or the median, lanes 0 exactly for the MPI library's rows.
bad=$(tail -n +2 "$dir/b.csv" | awk -F, 'NF != 11 || $5 != 2 || $6 != 2 || $8 != 4 * $7 ||
  $9 !~ /^[0-9.]+$/ || $10 !~ /^[0-9.]+$/ || $11 !~ /^[0-9.]+$/ || $10 > $9 + 0.0005 ||
  $10 > $11 + 0.0005 ||
  ($2 == "native") != ($4 == 0) || ($2 == "native") != ($3 == "mpi")')
[ -z "$bad" ] || { echo "FAIL: malformed rows:"; echo "$bad"; fail=1; }
for coll in bcast scatter alltoall allgather allreduce reduce; do
  for c in ${counts//,/ }; do
    n=$(grep -c "^$coll,native,mpi,0,2,2,$c," "$dir/b.csv")
    l=$(grep -c "^$coll,lanes,.*,2,2,$c," "$dir/b.csv")
    # Every algorithm that applies to nodes of 2 and 1: at least 3 (allreduce: 2, full-lane aside;
    # reduce: its one algorithm, binomial).
    want=3
    [ "$coll" = allreduce ] && want=2
    [ "$coll" = reduce ] && want=1
    [ "$n" = 1 ] && [ "$l" -ge "$want" ] ||
      { echo "FAIL: $coll count $c: $n native and $l lanes rows"; fail=1; }
  done
done
# full-lane needs nodes of equal size: left out with a line on stderr, not measured.
grep -q "skipping bcast full-lane" "$dir/err.txt" || { echo "FAIL: bcast full-lane not skipped"; fail=1; }
grep -q "^bcast,lanes,full-lane," "$dir/b.csv" && { echo "FAIL: bcast full-lane measured"; fail=1; }
grep -q "FAILED" "$dir/out.md" "$dir/err.txt" && { echo "FAIL: a result failed --check"; fail=1; }
rows=$(grep -c "| ok |" "$dir/out.md")
[ "$rows" = "$(($(wc -l <"$dir/b.csv") - 1))" ] ||
  { echo "FAIL: $rows checked rows in the table for $(($(wc -l <"$dir/b.csv") - 1)) CSV rows"; fail=1; }
# --memory shared: every buffer from lanes' shared heap, both libraries' results checked again.
"$run_mpi" 3 2 "$bench" --check --memory shared --collective bcast,gather,alltoall,allreduce \
  --counts 1,1000,70000 --reps 3 --warmup 1 --algorithms auto >"$dir/heap.md" 2>"$dir/heap.txt"
rc=$?
if [ $rc != 0 ] || grep -q "FAILED" "$dir/heap.md" "$dir/heap.txt" ||
  ! grep -q "buffers from lanes' shared heap" "$dir/heap.txt"; then
  cat "$dir/heap.md" "$dir/heap.txt"
  echo "FAIL: lanes-bench --memory shared (exit $rc)"
  fail=1
fi
[ $fail = 0 ] && echo "ok: $rows rows, and --memory shared"
exit $fail
