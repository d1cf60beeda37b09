#!/usr/bin/env bash
# The OSU-style reused-buffer loop (bench/mpi_reused_loop.c) without and with liblanes_mpi
# preloaded, alternating, ROUNDS times each, on this host with NP processes bound to cores; prints
# per collective and size the fastest round's time of each and MPI/lanes (> 1: lanes faster).
#   bench/preload_sweep.sh [NP] [ROUNDS] [MAX_BYTES]        (defaults: 2 3 4194304)
# ALLOC_MEM=1: the program takes its buffers from MPI_Alloc_mem (lanes' shared heap under
# liblanes_mpi, the MPI library's memory without it).
# Needs a build in build/ (scripts/setup.sh).
set -eu
np=${1:-2} rounds=${2:-3} max=${3:-4194304}
root=$(cd "$(dirname "$0")/.." && pwd)
prog=$root/build/bench/mpi-reused-loop lib=$root/build/mpi/liblanes_mpi.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "build first: scripts/setup.sh" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch=(mpirun -np "$np" --bind-to core --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
alloc=${ALLOC_MEM:-0}
for r in $(seq 1 "$rounds"); do
  "${launch[@]}" "$prog" --max-bytes "$max" --alloc-mem "$alloc" >"$tmp/mpi.$r"
  "${launch[@]}" -x LD_PRELOAD="$lib" "$prog" --max-bytes "$max" --alloc-mem "$alloc" \
    >"$tmp/lanes.$r"
done
echo "# mpirun -np $np --bind-to core mpi-reused-loop --alloc-mem $alloc, without and with LD_PRELOAD=liblanes_mpi.so, fastest of $rounds alternating rounds"
python3 - "$tmp" "$rounds" <<'PY'
import sys, collections
tmp, rounds = sys.argv[1], int(sys.argv[2])
best = {"mpi": {}, "lanes": {}}
order = []
for kind in best:
    for r in range(1, rounds + 1):
        for line in open(f"{tmp}/{kind}.{r}"):
            coll, size, us = line.split()
            key = (coll, int(size))
            if key not in order: order.append(key)
            best[kind][key] = min(best[kind].get(key, 1e30), float(us))
print("| collective | bytes | MPI us | lanes us | MPI/lanes |")
print("|---|---:|---:|---:|---:|")
for key in order:
    m, l = best["mpi"][key], best["lanes"][key]
    print(f"| {key[0]} | {key[1]} | {m:.2f} | {l:.2f} | {m / l:.2f} |")
PY
