#!/usr/bin/env bash
# The demo: bcast, scatter and alltoall through lanes next to the MPI library's MPI_Bcast,
# MPI_Scatter and MPI_Alltoall, every result checked, times measured side by side in one run.
# Every comparison is like for like:
#   1. One node: NP processes (default 2) on this host; lanes and MPI both go through shared
#      memory.
#   2. Two rails (as root, where network namespaces work): an emulated cluster of 2 nodes with 2
#      rails of 1 Gbit/s each (bench/testbed/lanes-testbed), one process per node; lanes on one
#      rail, lanes on both, and Open MPI's TCP transport striping over the same two rails. The
#      cluster is torn down at the end, also after a failure.
#   scripts/demo.sh [lanes-demo options, e.g. --sizes 1024,4194304 --reps 10]
#   NP=4 scripts/demo.sh
#   LANES_DEMO_SETUP=0: use the build in LANES_BUILD_DIR as it is (no package check, no build).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${LANES_DEMO_SETUP:-1}" = 0 ] || scripts/setup.sh >/dev/null
build=${LANES_BUILD_DIR:-build}
demo=$(realpath "$build/bench/lanes-demo")
testbed=$(realpath bench/testbed/lanes-testbed)
np=${NP:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "== 1. One node: $np processes, lanes and MPI both through shared memory"
bind=(--bind-to core)
[ "$np" -gt "$(nproc)" ] && bind=(--bind-to none --mca mpi_yield_when_idle 1)
MPIRUN_EXTRA="${bind[*]}" tests/integration/run_mpi.sh "$np" "$np" "$demo" \
  --sizes 1024,1048576,16777216 "$@"
cat <<'EOF'

Reading: lanes' processes share memory, and so do the MPI library's. A large broadcast or
scatter streams through lanes' node segment, the sender filling one chunk while the receiver
empties the other, so both cores copy at once; an alltoall's large messages go with a single
copy. A call of 1 KiB costs about what MPI's costs. The machine's noise moves a ratio by 10-20 %
between runs.
EOF

echo
echo "== 2. Two nodes x two rails of 1 Gbit/s: one process per node"
why=""
if [ "$(id -u)" != 0 ]; then
  why="needs root (network namespaces, veth pairs, tc)"
elif ! unshare --net true 2>/dev/null || ! ip netns list >/dev/null 2>&1; then
  why="network namespaces cannot be created here"
elif "$testbed" status >/dev/null 2>&1; then
  why="an emulated cluster is already up (lanes-testbed status); the demo leaves it alone"
fi
if [ -n "$why" ]; then
  echo "skipped: $why"
  exit 0
fi
trap '"$testbed" down >/dev/null 2>&1 || true' EXIT
"$testbed" up 2 2 1gbit >/dev/null
# Open MPI's own TCP transport over both rails (ob1 stripes a large message over them).
"$testbed" mpirun -np 2 -npernode 1 --mca pml ob1 --mca btl tcp,self \
  --mca btl_tcp_if_include rail0,rail1 "$demo" --lanes 1,2 --sizes 1024,65536,4000000 "$@"
cat <<'EOF'

Reading: each rail carries 1 Gbit/s, so a 4 MB broadcast needs at least 32 ms on one rail and
16 ms on two (a scatter or an alltoall of 4 MB moves half of that between the nodes). With one
process per node, lanes drives both rails from that process and stripes each large message over
them: "2 lanes / 1" near 2 is the second rail put to use. Open MPI stripes over the same two
rails with its TCP transport and reaches the same bound. Calls of 1 KiB cost a rail's latency
in both. The middle rows (64 KiB) measure the emulation more than the links: tc's token bucket
lets a burst through at the veth's speed and then holds a flow to the rate, so whichever call
finds the bucket full wins there (unshaped, one lane and two take the same time).
EOF
