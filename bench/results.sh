#!/usr/bin/env bash
# Regenerates bench/RESULTS.md: lanes against Open MPI's own collectives (bcast, scatter,
# alltoall, and the MPI_INT sums allreduce and reduce), measured side by side (lanes-bench runs
# both in one process, interleaved), on
#  (a) this host as one node with 2 processes bound to cores (2000 repetitions up to 1000 ints)
#  (a') the same with every buffer from lanes' shared heap (lanes-bench --memory shared)
#      and 4 (oversubscribing the 2 cores), against Open MPI's default (tuned) and its han
#      component, bcast, scatter, gather, alltoall, allgather, allreduce and reduce; the
#      reductions (allreduce, reduce) of 4 bytes, 4 MiB and 16 MiB with 2 processes bound to
#      cores; and seed 001's crossover between whole-vector and partitioned allreduce, beside the rates of memcpy and of the reduction kernel that price
#      the one-node bounds;
#  (b) emulated clusters of bench/testbed/ (network namespaces, shaped veth rails), Open MPI over
#      the same rails: 2 nodes x 1 process, 2 x 2 and 4 x 1 on two 1 Gbit/s rails (every count,
#      every algorithm, lanes on 1 and 2 rails), 2 x 1 on four rails, 2 x 1 on rails of
#      1 Gbit/s and 500 Mbit/s, and 4 x 2 (8 processes on the 2 cores: a diagnostic). Each layout
#      first passes `lanes-testbed check` (iperf3 on every rail, Open MPI between nodes), then
#      lanes-calibrate measures the cost model's parameters on it, then lanes-bench runs with
#      them.
#  (c) seed 003's claim: every reduce base algorithm against its hierarchical transformation
#      (hierarchical-<base>), 16 KB to 16 MB, on 4 x 2 (8 processes on the 2 cores).
# Then plots, and the targets' ratios.
#   bench/results.sh [--quick] [--only LAYOUT,...]
#     --quick: 3 counts and few repetitions, to try the pipeline;
#     --only:  runs these parts again (`onenode` for (a), `heap` for (a'), emulated layouts by their names in
#              `layouts` below), keeps every other result of bench/results and writes RESULTS.md
#              anew from all of them.
# Needs root for (b) (network namespaces); without it, (b) is left out and RESULTS.md says so.
# Needs a build in build/ (scripts/setup.sh), iperf3 and python3-matplotlib (setup.sh installs
# them).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=bench/results
bench=$root/build/bench/lanes-bench
calibrate=$root/build/bench/lanes-calibrate
model=$root/build/lib/tools/lanes-model
testbed=$root/bench/testbed/lanes-testbed
# Counts in three bands, each with its own repetitions: small counts are noisy and cheap, the
# largest is the expensive one.
small=1,10,100,1000 mid=10000,100000 big=1000000
reps_small=1000 reps_mid=100 reps_big=50 warmup=5 mode=full
# Seed 003's sizes: 16 KB to 16 MB in steps of 4 (MPI_INT counts), two bands of repetitions.
# Where G = 1 or G = p both variants run one schedule and their ratio is noise alone: with 40
# repetitions of the 1-16 MB band it reached 1.11 on averages (8 processes on 2 cores).
hier_small=4096,16384,65536 hier_big=262144,1048576,4194304 reps_hier_small=500 reps_hier_big=100
# On the emulated clusters, unmeasured calls of a variant before each measured one (lanes-bench
# --settle): they drain the token buckets of the rails it uses, which fill while other variants
# leave those rails idle. Not at the largest count (nor seed 003's 1-16 MB), where a bucket (80 KiB
# per Gbit/s) is at most 4 % of a rail's share of one call, and settling would triple the longest
# part of the run.
settle=2
# The one-node reductions bound to cores: a 4-byte vector, and 4 MiB and 16 MiB ones.
reduction_small=1 reduction_big=1048576,4194304 reduction_reps_small=2000 reduction_reps_big=50
only=""
while [ $# -gt 0 ]; do
  case $1 in
    --quick)
      small=1 mid=100000 reps_small=20 reps_mid=5 reps_big=3 warmup=1 mode=quick
      hier_small=4096 hier_big=262144 reps_hier_small=5 reps_hier_big=3
      reduction_reps_small=20 reduction_reps_big=3 ;;
    --only) only=${2:?--only needs layout names}; shift ;;
    *) echo "usage: bench/results.sh [--quick] [--only LAYOUT,...]" >&2; exit 2 ;;
  esac
  shift
done
counts=$small,$mid,$big
[ -x "$bench" ] || { echo "results.sh: build first (scripts/setup.sh)" >&2; exit 2; }
commands=$out/commands.txt
if [ -z "$only" ]; then
  rm -rf "$out" && mkdir -p "$out"
  : >"$commands"
else
  [ -d "$out" ] || { echo "results.sh: --only needs the results of a full run in $out" >&2; exit 2; }
  echo "# again, with --only $only, at $(git -C "$root" rev-parse --short HEAD)" >>"$commands"
fi
run() {  # logs and runs a command; its stdout goes to the file named first
  local log=$1; shift
  echo "$*" >>"$commands"
  echo "+ $*" >&2
  "$@" >"$log"
}
# Concatenates lanes-bench CSV files (one header).
merge_csv() {  # out in...
  local dest=$1; shift
  { head -1 "$1"; for f in "$@"; do tail -n +2 "$f"; done; } >"$dest"
  rm -f "$@"
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
colls=bcast,scatter,alltoall,allreduce,reduce
# Every algorithm of these collectives, by name.
# Every algorithm of the collectives COLLS (comma-separated) that applies to NODES x PPN, by name.
algorithms_of() {  # COLLS NODES PPN
  for c in ${1//,/ }; do
    "$model" --collective "$c" --nodes "$2" --ppn "$3" --bytes 1 | awk '/^  / {print $1}'
  done | sort -u | paste -sd, -
}
all_algos=$(algorithms_of "$colls" 4 2)

wants() {  # is this part (onenode, heap or a layout's name) to run?
  [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]
}
if [ -n "$only" ]; then
  echo "again: $only at $(date -u '+%Y-%m-%d %H:%M UTC'), lanes" \
    "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
    "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores online)" >>"$out/machine.txt"
fi
if wants onenode; then
# The machine.
if [ -z "$only" ]; then
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) cores online)"
  echo "memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
  echo "kernel: $(uname -r)"
  echo "Open MPI: $(ompi_info --version 2>/dev/null | head -1 | sed 's/.*v//')"
  echo "UCX: $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)"
  echo "lanes: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "mode: $mode (counts $counts; repetitions $reps_small up to $small, $reps_mid up to $mid, $reps_big at $big; $warmup warm-up)"
} >"$out/machine.txt"
fi

# Single-core memcpy rate at every size from 4 KiB to 64 MiB, for the one-node copy bound.
run "$out/memcpy.json" "$root/build/bench/micro/lanes-micro" --benchmark_filter='copy/memcpy/' \
  --benchmark_format=json --benchmark_min_time=0.5
# The reduction kernels' rate (MPI_INT sum), 64 KiB to 16 MiB, for the copy and reduction bound.
run "$out/combine.json" "$root/build/bench/micro/lanes-micro" \
  --benchmark_filter='combine/.*/int32_sum/' --benchmark_format=json --benchmark_min_time=0.5

# (a) One node: 2 processes bound to cores, each on its own; 4 processes oversubscribe the 2
# cores (unbound, Open MPI yielding when idle). 2000 repetitions up to 1000 ints (a call there
# takes a few microseconds: averages of fewer carry a few slow repetitions, and with 4 processes
# on 2 cores more of them), 100 above.
onenode_colls=bcast,scatter,gather,alltoall,allgather,allreduce,reduce
onenode_algos=$(algorithms_of "$onenode_colls" 1 4)
onenode_reps=100 onenode_reps_small=2000
[ $mode = quick ] && onenode_reps=10 onenode_reps_small=20
local_mpi=(--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x LANES_RAILS=lo)
bound_mpi=(mpirun --bind-to core "${local_mpi[@]}")
shared_mpi=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 "${local_mpi[@]}")
for np in 2 4; do
  one_node=("${bound_mpi[@]}")
  [ $np = 4 ] && one_node=("${shared_mpi[@]}")
  bands=("$small:$onenode_reps_small" "$mid,$big:$onenode_reps")
  for flavour in tuned han; do
    suffix="" algos="auto,$onenode_algos" extra=()
    [ $flavour = han ] && suffix=_han algos=auto extra=(--mca coll_han_priority 100)
    parts=()
    for i in "${!bands[@]}"; do
      part=$out/part_onenode_$i
      run "$part.md" "${one_node[@]}" -np "$np" "${extra[@]}" "$bench" \
        --collective "$onenode_colls" --counts "${bands[$i]%%:*}" --reps "${bands[$i]##*:}" \
        --warmup "$warmup" --algorithms "$algos" --csv "$part.csv"
      parts+=("$part.csv")
    done
    merge_csv "$out/onenode_np$np$suffix.csv" "${parts[@]}"
    cat "$out"/part_onenode_*.md >"$out/onenode_np$np$suffix.md" && rm -f "$out"/part_onenode_*.md
  done
  # For the plots: han's rows are the MPI library's under another name; its lanes rows repeat
  # the run above.
  awk -F, -v OFS=, 'NR == 1 || $2 == "native" { if (NR > 1) $3 = "mpi-han"; print }' \
    "$out/onenode_np${np}_han.csv" >"$out/han_np$np.csv"
done
# The reductions with 2 processes bound to cores, every allreduce and reduce algorithm.
bound=("${bound_mpi[@]}" -np 2 "$bench" --collective allreduce,reduce --warmup "$warmup"
       --algorithms "auto,$(algorithms_of allreduce,reduce 1 2)")
run "$out/part_reductions_0.md" "${bound[@]}" --counts "$reduction_small" \
  --reps "$reduction_reps_small" --csv "$out/part_reductions_0.csv"
run "$out/part_reductions_1.md" "${bound[@]}" --counts "$reduction_big" \
  --reps "$reduction_reps_big" --csv "$out/part_reductions_1.csv"
merge_csv "$out/reductions_np2.csv" "$out"/part_reductions_[01].csv
cat "$out"/part_reductions_[01].md >"$out/reductions_np2.md" && rm -f "$out"/part_reductions_*.md
# Seed 001's crossover: the partitioned allreduce (full-lane: each process combines its slice of
# every vector) against the whole-vector ones (a tree, reduce-bcast, and the exchanges,
# recursive-doubling and hierarchical), 4 B to 4 MiB in steps of 2, with 2 processes bound to
# cores and 4 on the 2 cores, with the cost model calibrated on this node (lanes-calibrate with 2
# processes bound to cores: its on-node start-up and rate, and the reduction kernel's rate).
# LANES_INFO=1: rank 0 prints the cost model's ranking of every algorithm at each size (the one
# lanes `auto` follows), kept in model_crossover_np*.txt.
run "$out/calibrate_onenode.txt" "${bound_mpi[@]}" -np 2 "$calibrate" \
  --output "$out/calibration_onenode.txt"
crossover_counts=$(for i in $(seq 0 20); do echo $((1 << i)); done | paste -sd, -)
crossover_reps=(1:1024:1000 2048:65536:200 131072:1048576:40)
[ $mode = quick ] && crossover_counts=1,256,65536 crossover_reps=(1:1024:20 2048:1048576:3)
for np in 2 4; do
  launch=("${shared_mpi[@]}")
  [ $np = 2 ] && launch=("${bound_mpi[@]}")
  : >"$out/model_crossover_np$np.txt"
  parts=()
  for i in "${!crossover_reps[@]}"; do
    IFS=: read -r lo hi n <<<"${crossover_reps[$i]}"
    band=$(tr , '\n' <<<"$crossover_counts" | awk -v lo="$lo" -v hi="$hi" '$1 >= lo && $1 <= hi' |
      paste -sd, -)
    [ -n "$band" ] || continue
    part=$out/part_crossover_$i
    run "$part.md" "${launch[@]}" -x LANES_INFO=1 \
      -x LANES_CALIBRATION="$root/$out/calibration_onenode.txt" -np "$np" "$bench" \
      --collective allreduce --counts "$band" --reps "$n" --warmup "$warmup" \
      --algorithms auto,full-lane,reduce-bcast,recursive-doubling,hierarchical --csv "$part.csv" \
      2>>"$out/model_crossover_np$np.txt"
    parts+=("$part.csv")
  done
  merge_csv "$out/crossover_np$np.csv" "${parts[@]}"
  rm -f "$out"/part_crossover_*.md
done
fi

# (a') One node again with every buffer, Open MPI's as well as lanes', from lanes' shared heap
# (lanes-bench --memory shared: lanes::Runtime::allocate), which node peers read in place: 2
# processes bound to cores, lanes auto beside Open MPI's default on the same buffers, the seven
# collectives at every count and the reductions' 4 and 16 MiB vectors; then 4 processes on the 2
# cores.
if wants heap; then
  heap_run=(mpirun --bind-to core --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo
            -x LANES_RAILS=lo -np 2 "$bench" --memory shared --warmup "$warmup" --algorithms auto)
  heap_colls=bcast,scatter,gather,alltoall,allgather,allreduce,reduce
  heap_reps=100 heap_reps_small=2000
  [ $mode = quick ] && heap_reps=10 heap_reps_small=20
  run "$out/part_heap_0.md" "${heap_run[@]}" --collective "$heap_colls" --counts "$small" \
    --reps "$heap_reps_small" --csv "$out/part_heap_0.csv"
  run "$out/part_heap_1.md" "${heap_run[@]}" --collective "$heap_colls" --counts "$mid,$big" \
    --reps "$heap_reps" --csv "$out/part_heap_1.csv"
  run "$out/part_heap_2.md" "${heap_run[@]}" --collective allreduce,reduce \
    --counts "$reduction_big" --reps "$reduction_reps_big" --csv "$out/part_heap_2.csv"
  merge_csv "$out/heap_np2.csv" "$out"/part_heap_[012].csv
  cat "$out"/part_heap_[012].md >"$out/heap_np2.md" && rm -f "$out"/part_heap_*.md
  # 4 processes on the 2 cores, as in (a).
  heap_shared=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
               --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo -x LANES_RAILS=lo -np 4
               "$bench" --memory shared --warmup "$warmup" --algorithms auto
               --collective "$heap_colls")
  run "$out/part_heap_3.md" "${heap_shared[@]}" --counts "$small" --reps "$heap_reps_small" \
    --csv "$out/part_heap_3.csv"
  run "$out/part_heap_4.md" "${heap_shared[@]}" --counts "$mid,$big" --reps "$heap_reps" \
    --csv "$out/part_heap_4.csv"
  merge_csv "$out/heap_np4.csv" "$out"/part_heap_[34].csv
  cat "$out"/part_heap_[34].md >"$out/heap_np4.md" && rm -f "$out"/part_heap_*.md
fi

# (b) The emulated clusters. name nodes rails rate processes kind
#   main:       every count, every algorithm on all rails, lanes auto on one rail
#   rails:      lanes auto on one rail and on all, every count
#   unequal:    the largest count, lanes auto on the fast rail alone and on both
#   diagnostic: as main, lanes on 2 rails only
#   hierarchy:  reduce alone, every base algorithm and its hierarchical transformation, whose
#               number of groups the runtime searches (LANES_HIERARCHY_GROUPS=search: the first
#               calls of each size try every G; the warm-up covers them) (c)
layouts=(
  "2x1 2 2 1gbit 2 main"
  "2x2 2 2 1gbit 4 main"
  "4x1 4 2 1gbit 4 main"
  "2x1-4rails 2 4 1gbit 2 rails"
  "2x1-unequal 2 2 1gbit,500mbit 2 unequal"
  "4x2 4 2 1gbit 8 diagnostic"
  "4x2-hierarchy 4 2 1gbit 8 hierarchy"
)
# The reduce base algorithms and their transformations.
hier_bases=linear,chain,binary,binomial,in-order-binary,rabenseifner
hier_algos=$hier_bases,hierarchical-${hier_bases//,/,hierarchical-}
cluster_note=""
if [ "$(id -u)" = 0 ] && ip netns list >/dev/null 2>&1 && command -v iperf3 >/dev/null; then
  trap '"$testbed" down >/dev/null 2>&1 || true' EXIT
  for layout in "${layouts[@]}"; do
    read -r name nodes rails rate np kind <<<"$layout"
    wants "$name" || continue
    run /dev/null "$testbed" up "$nodes" "$rails" "$rate"
    run "$out/check_$name.txt" "$testbed" check -np "$np"
    cal=$out/calibration_$name.txt
    run "$out/calibrate_$name.txt" "$testbed" mpirun -np "$np" "$calibrate" --output "$cal"
    on=(-x "LANES_CALIBRATION=$root/$cal")
    "$testbed" counters >"$out/counters_before_$name.txt"
    head -1 /proc/stat >"$out/cpu_before_$name.txt"
    parts=()
    bench_err=/dev/stderr part_warmup=$warmup
    if [ $kind = hierarchy ]; then
      # LANES_INFO=1 makes rank 0 report each search's times and G (groups_<layout>.txt); with 3
      # choices of G on 8 ranks in nodes of 2, the first 9 calls of each size are trials (an
      # untimed round and two timed ones).
      on+=(-x LANES_HIERARCHY_GROUPS=search -x LANES_INFO=1)
      bench_err=$out/groups_$name.txt part_warmup=$((warmup > 9 ? warmup : 9))
      : >"$bench_err"
    fi
    bench_part() {  # counts reps lanes algorithms settle [collectives]
      local part=$out/part_${name}_${#parts[@]}.csv
      parts+=("$part")
      run "$out/part_${name}_${#parts[@]}.md" "$testbed" mpirun -np "$np" "${on[@]}" "$bench" \
        --collective "${6:-$colls}" --counts "$1" --reps "$2" --warmup "$part_warmup" \
        --lanes "$3" --algorithms "$4" --settle "$5" --csv "$part" 2>>"$bench_err"
    }
    case $kind in
      main | diagnostic)
        lanes_list=1,$rails
        [ $kind = diagnostic ] && lanes_list=$rails
        bench_part "$small" "$reps_small" "$rails" "auto,$all_algos" $settle
        bench_part "$mid" "$reps_mid" "$rails" "auto,$all_algos" $settle
        bench_part "$big" "$reps_big" "$lanes_list" "auto,$all_algos" 0
        [ $kind = main ] && bench_part "$small,$mid" "$reps_mid" 1 auto $settle
        ;;
      rails)
        bench_part "$small" "$reps_small" "1,$rails" auto $settle
        bench_part "$mid" "$reps_mid" "1,$rails" auto $settle
        bench_part "$big" "$reps_mid" "1,$rails" auto 0
        ;;
      unequal)
        bench_part "$big" "$reps_mid" "1,$rails" auto 0
        ;;
      hierarchy)
        bench_part "$hier_small" "$reps_hier_small" "$rails" "$hier_algos" $settle reduce
        bench_part "$hier_big" "$reps_hier_big" "$rails" "$hier_algos" 0 reduce
        ;;
    esac
    merge_csv "$out/cluster_$name.csv" "${parts[@]}"
    cat "$out"/part_"${name}"_*.md >"$out/cluster_$name.md" && rm -f "$out"/part_"${name}"_*.md
    "$testbed" counters >"$out/counters_after_$name.txt"
    head -1 /proc/stat >"$out/cpu_after_$name.txt"
    run /dev/null "$testbed" down
    ppn=$((np / nodes))
    if [ $kind = hierarchy ]; then  # the groups G the cost model would choose, per size
      for c in ${hier_small//,/ } ${hier_big//,/ }; do
        run "$out/model_${name}_reduce_$c.txt" "$model" --collective reduce --nodes "$nodes" \
          --ppn "$ppn" --rails "$rails" --bytes $((c * 4)) --calibration "$cal"
      done
      continue
    fi
    for c in ${colls//,/ }; do
      run "$out/model_${name}_$c.txt" "$model" --collective "$c" --nodes "$nodes" --ppn "$ppn" \
        --rails "$rails" --bytes $((${big} * 4)) --calibration "$cal"
    done
  done
  trap - EXIT
else
  cluster_note="The emulated clusters need root, network namespaces and iperf3; this run had not all of them."
fi

# Plots and the report.
plots=$(ls "$out"/onenode_np*.csv "$out"/han_np*.csv "$out"/cluster_2x1.csv \
  "$out"/cluster_2x2.csv "$out"/cluster_4x1.csv "$out"/cluster_4x2.csv 2>/dev/null |
  grep -v '_han.csv$' || true)
# shellcheck disable=SC2086
run "$out/plots.txt" /usr/bin/python3 bench/plot.py --out "$out" $plots
/usr/bin/python3 bench/summarize.py --dir "$out" --note "$cluster_note" >bench/RESULTS.md
echo "bench/RESULTS.md written ($(wc -l <bench/RESULTS.md) lines); data and plots in $out/" >&2
