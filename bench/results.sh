#!/usr/bin/env bash
# Regenerates bench/RESULTS.md: lanes against Open MPI's own collectives, measured side by side
# (lanes-bench runs both in one process, interleaved), on (a) this host as one node with 2 and 4
# processes, against Open MPI's default (tuned) and its han component, and (b) an emulated cluster
# of 4 nodes x 2 processes with two 1 Gbit/s rails, lanes on 1 and on 2 rails against Open MPI
# over the same two rails. Then plots, and the targets' ratios.
#   bench/results.sh [--quick]     (--quick: 3 counts and 10 repetitions, to try the pipeline)
# Needs root for (b) (network namespaces); without it, (b) is left out and RESULTS.md says so.
# Needs a build in build/ (scripts/setup.sh) and python3-matplotlib.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=bench/results
bench=$root/build/bench/lanes-bench
testbed=$root/bench/testbed/lanes-testbed
counts=1,10,100,1000,10000,100000,1000000 reps=100 warmup=5 mode=full
if [ "${1:-}" = --quick ]; then counts=1,1000,1000000 reps=10 warmup=2 mode=quick; fi
[ -x "$bench" ] || { echo "results.sh: build first (scripts/setup.sh)" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out"
commands=$out/commands.txt
: >"$commands"
run() {  # logs and runs a command; its stdout goes to the file named first
  local log=$1; shift
  echo "$*" >>"$commands"
  echo "+ $*" >&2
  "$@" >"$log"
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
colls=bcast,scatter,alltoall
# auto (the runtime's own choice) and every algorithm of the three collectives, by name.
algos=auto,$(for c in bcast scatter alltoall; do
  build/lib/tools/lanes-model --collective $c --nodes 4 --ppn 2 --bytes 1 | awk '/^  / {print $1}'
done | sort -u | paste -sd, -)

# The machine.
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores online)"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
  echo "kernel: $(uname -r)"
  echo "Open MPI: $(ompi_info --version 2>/dev/null | head -1 | sed 's/.*v//')"
  echo "UCX: $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)"
  echo "lanes: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "mode: $mode (counts $counts, $reps repetitions after $warmup warm-up)"
} >"$out/machine.txt"

# Single-core memcpy rate at every size from 4 KiB to 64 MiB, for the one-node copy bound.
run "$out/memcpy.json" "$root/build/bench/micro/lanes-micro" --benchmark_filter='copy/memcpy/' \
  --benchmark_format=json --benchmark_min_time=0.5

# (a) One node, 2 and 4 processes (4 oversubscribe the 2 cores).
one_node=(mpirun --oversubscribe --bind-to none --mca btl_tcp_if_include lo
          --mca oob_tcp_if_include lo -x LANES_RAILS=lo)
for np in 2 4; do
  run "$out/onenode_np$np.md" "${one_node[@]}" -np "$np" "$bench" --collective "$colls" \
    --counts "$counts" --reps "$reps" --warmup "$warmup" --algorithms "$algos" \
    --csv "$out/onenode_np$np.csv"
  run "$out/onenode_np${np}_han.md" "${one_node[@]}" -np "$np" --mca coll_han_priority 100 \
    "$bench" --collective "$colls" --counts "$counts" --reps "$reps" --warmup "$warmup" \
    --algorithms auto --csv "$out/onenode_np${np}_han.csv"
  # For the plots: han's rows are the MPI library's under another name; its lanes rows repeat
  # the run above.
  awk -F, -v OFS=, 'NR == 1 || $2 == "native" { if (NR > 1) $3 = "mpi-han"; print }' \
    "$out/onenode_np${np}_han.csv" >"$out/han_np$np.csv"
done

# (b) The emulated cluster: 4 nodes x 2 processes, 2 rails of 1 Gbit/s.
cluster_note=""
if [ "$(id -u)" = 0 ] && ip netns list >/dev/null 2>&1; then
  trap '"$testbed" down >/dev/null 2>&1 || true' EXIT
  run /dev/null "$testbed" up 4 2 1gbit
  mpi_rails=(--mca pml ob1 --mca btl tcp,vader,self --mca btl_tcp_if_include rail0,rail1)
  "$testbed" counters >"$out/counters_before.txt"
  head -1 /proc/stat >"$out/cpu_before.txt"
  run "$out/cluster.md" "$testbed" mpirun -np 8 "${mpi_rails[@]}" -x LANES_PROGRESS=wait \
    "$bench" --collective "$colls" --counts "$counts" --reps "$reps" --warmup "$warmup" \
    --algorithms "$algos" --lanes 1,2 --csv "$out/cluster.csv"
  "$testbed" counters >"$out/counters_after.txt"
  head -1 /proc/stat >"$out/cpu_after.txt"
  # The same small and large broadcast with one process per node (4 processes on the 2 cores
  # instead of 8): how much of a step's time is waiting for a core.
  run "$out/cluster_1ppn.md" "$testbed" mpirun -np 4 -npernode 1 "${mpi_rails[@]}" \
    -x LANES_PROGRESS=wait "$bench" --collective bcast --counts 1,${counts##*,} --reps "$reps" \
    --warmup "$warmup" --algorithms auto --csv "$out/cluster_1ppn.csv"
  # The cost model, calibrated on the same cluster.
  run "$out/calibrate.txt" "$testbed" mpirun -np 8 "${mpi_rails[@]}" -x LANES_PROGRESS=wait \
    "$root/build/bench/lanes-calibrate" --output "$out/calibration.txt"
  "$testbed" down >/dev/null
  trap - EXIT
  largest=${counts##*,}
  for c in bcast scatter alltoall; do
    run "$out/model_$c.txt" build/lib/tools/lanes-model --collective "$c" --nodes 4 --ppn 2 \
      --rails 2 --bytes $((largest * 4)) --calibration "$out/calibration.txt"
  done
else
  cluster_note="The emulated cluster needs root and network namespaces; this run had neither."
fi

# Plots and the report.
plots=$(ls "$out"/*.csv | grep -v '_han.csv$')
run "$out/plots.txt" /usr/bin/python3 bench/plot.py --out "$out" $plots
/usr/bin/python3 bench/summarize.py --dir "$out" --rail-gbit 1 --note "$cluster_note" \
  >bench/RESULTS.md
echo "bench/RESULTS.md written ($(wc -l <bench/RESULTS.md) lines); data and plots in $out/" >&2
