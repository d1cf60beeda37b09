#!/usr/bin/env bash
# The emulated cluster end to end: 2 nodes (network namespaces) x 2 rails, 2 processes per node,
# LANES_RAILS=rail0,rail1. bcast, scatter and alltoall with every algorithm must deliver every
# byte, the interface counters must show the off-node volume on BOTH rails and next to nothing
# on the management network; with one process per node, a broadcast must put about half of its
# bytes on each rail (the process drives both and stripes over them); the automatic progress
# mode must count the nodes' processes on the host's CPUs together; and the teardown must leave
# no namespace, link, route or /dev/shm segment behind.
#   testbed_smoke.sh TESTBED_SCRIPT COLLECTIVES_CHECK
# Skips (exit 77) where not root or where network namespaces cannot be made.
set -u
# Absolute paths: the processes start in the namespaces, on the same file system.
testbed=$(realpath "$1") check=$(realpath "$2")
bench=$(realpath -m "$(dirname "$check")/../../bench/lanes-bench")

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth, tc)"
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then skip "needs ip and tc (iproute2)"; fi
command -v mpirun >/dev/null || skip "needs Open MPI's mpirun"
unshare --net --mount true 2>/dev/null || skip "cannot create network namespaces here"
ip netns list >/dev/null 2>&1 || skip "ip netns is unavailable"

# One smoke test per host at a time (its names and addresses are fixed); another user's testbed
# would be torn down by `up`, so refuse to run over one that has processes inside.
exec 8>/run/lanes-testbed-smoke.lock
flock -w 120 8 || fail "another testbed smoke test holds /run/lanes-testbed-smoke.lock"
for ns in $(ip netns list | awk '{print $1}' | grep -E '^node[0-9]+$'); do
  [ -z "$(ip netns pids "$ns")" ] || skip "a testbed with running processes is up (namespace $ns)"
done

shm_lanes() { find /dev/shm -maxdepth 1 -name 'lanes-*' -printf '%f\n' 2>/dev/null | sort; }
shm_before=$(shm_lanes)
start=$(date +%s.%N)

# Teardown on every exit, failure included; then check that nothing of the testbed is left.
cleanup() {
  local rc=$? left=""
  trap - EXIT INT TERM
  "$testbed" down || rc=1
  left+=$(ip netns list | awk '{print $1}' | grep -E '^node[0-9]+$' | tr '\n' ' ')
  left+=$(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' |
    grep -E '^(node[0-9]+(r[0-9]+|m)|br-rail[0-9]+|br-mgmt)$' | tr '\n' ' ')
  left+=$(ip route show type unreachable | grep -F '10.77.0.0/16' | tr '\n' ' ')
  # A segment that appeared during the run and that no live process maps: ours, orphaned.
  local f busy
  busy=$(cat /proc/[0-9]*/maps 2>/dev/null | awk '{print $6}' | grep '^/dev/shm/lanes-' | sort -u)
  for f in $(comm -13 <(echo "$shm_before") <(shm_lanes)); do
    grep -qxF "/dev/shm/$f" <<<"$busy" || left+="/dev/shm/$f "
  done
  if [ -n "$left" ]; then
    echo "FAIL: left behind: $left"
    rc=1
  fi
  echo "testbed_smoke: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

t0=$(date +%s.%N)
# Shaped at 4 Gbit/s per rail and direction: exercises tbf, yet the run stays quick.
"$testbed" up 2 2 4gbit || fail "testbed up"
echo "up: $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN {printf "%.2f", e - s}') s"

# Sum over both nodes of one interface's tx bytes (a byte sent off-node leaves one node's rail
# interface once) or of its rx + tx bytes (mgmt: whatever the launcher moved, both ways).
tx_of() { "$testbed" counters | awk -v i="$1" '$2 == i {s += $4} END {print s + 0}'; }
both_of() { "$testbed" counters | awk -v i="$1" '$2 == i {s += $3 + $4} END {print s + 0}'; }
snapshot() { echo "$(tx_of rail0) $(tx_of rail1) $(both_of mgmt)"; }

export LANES_RAILS=rail0,rail1 LANES_PROGRESS=wait
run() { # mpirun args...: 4 processes, 2 per node, bounded in time
  timeout --kill-after=5 40 "$testbed" mpirun -np 4 -npernode 2 "$@"
}

# 1. The baseline: a run that moves no data (init, one empty bcast, finalize) costs the
# launcher's control traffic on mgmt: daemons' start, PMIx exchange of addresses, output, exit.
read -r _ _ ma < <(snapshot)
out=$(run "$check" --sizes 0 --colls bcast 2>&1) || { echo "$out"; fail "no-op run"; }
read -r r0b r1b mb < <(snapshot)
mgmt_noop=$((mb - ma))

# 2. Every algorithm of bcast, scatter and alltoall over every root, every byte checked.
size=1048579
out=$(run "$check" --sizes 0,7,65537,$size --colls bcast,scatter,alltoall --algorithms all 2>&1)
rc=$?
echo "$out" | tail -5
[ $rc = 0 ] || fail "collectives_check exit code $rc"
echo "$out" | grep -q "4 ranks on 2 nodes" || fail "the 4 processes did not form 2 nodes"
read -r r0c r1c mc < <(snapshot)
rail0=$((r0c - r0b)) rail1=$((r1c - r1b)) mgmt=$((mc - mb))

# The least that must cross between the nodes, from the largest size alone, whatever the
# algorithm (roots 0..3, 2 processes per node): a bcast moves the payload once to the other
# node (4 roots: 4 S); a scatter the 2 blocks of the other node (8 S); an alltoall 2 blocks from
# each of 4 processes (8 S). 9 bcast, 5 scatter and 6 alltoall algorithms: 124 S in all.
min_off=$((124 * size))
echo "off-node minimum $min_off B; rail0 +$rail0 B, rail1 +$rail1 B; mgmt +$mgmt B (no-op run: +$mgmt_noop B)"
# All of it went over the rails (not shared memory or loopback between the namespaces)...
[ $((rail0 + rail1)) -ge $min_off ] || fail "rails carried $((rail0 + rail1)) B < $min_off B"
# ...and over both: each local rank drives its own rail and the k-lane, full-lane and k-ported
# algorithms use both lanes, so each rail carries far more than a fifth of the minimum (about
# 45-55 % of the total here); a lane mapping or UCX device selection that put everything on one
# rail leaves the other near zero.
[ "$rail0" -ge $((min_off / 5)) ] || fail "rail0 carried only $rail0 B (< $((min_off / 5)) B)"
[ "$rail1" -ge $((min_off / 5)) ] || fail "rail1 carried only $rail1 B (< $((min_off / 5)) B)"
# mgmt: the launcher's control traffic does not grow with the data (about 35 KB per run here,
# no-op or not). Allow twice the no-op run plus 64 KiB for more output lines and timing; data on
# mgmt would show as megabytes (the run moves > 110 MiB), so 1 % of the rail volume is a second,
# independent bound.
[ $mgmt -le $((2 * mgmt_noop + 65536)) ] ||
  fail "mgmt carried $mgmt B, more than twice the no-op run's $mgmt_noop B + 64 KiB"
[ $((mgmt * 100)) -le $((rail0 + rail1)) ] || fail "mgmt carried $mgmt B, over 1 % of the rails' volume"

# 3. One process per node drives both rails: its broadcasts (binomial, chosen by name, and the
# runtime's own choice) stripe every message over them, half on each (equal rails). Allow 40 %.
read -r r0b r1b _ < <(snapshot)
big=4194307
for algo in binomial auto; do
  out=$(LANES_BCAST_ALGORITHM=$algo timeout --kill-after=5 40 "$testbed" mpirun -np 2 -npernode 1 \
    "$check" --sizes $big --colls bcast 2>&1) || { echo "$out"; fail "one process per node, $algo"; }
done
read -r r0c r1c _ < <(snapshot)
rail0=$((r0c - r0b)) rail1=$((r1c - r1b))
echo "one process per node: rail0 +$rail0 B, rail1 +$rail1 B"
# Two roots, two algorithms: at least 4 payloads crossed.
[ $((rail0 + rail1)) -ge $((4 * big)) ] || fail "one process per node: rails carried $((rail0 + rail1)) B < $((4 * big)) B"
for r in $rail0 $rail1; do
  [ $((r * 10)) -ge $((4 * (rail0 + rail1))) ] ||
    fail "one process per node: a rail carried $r B of $((rail0 + rail1)) B, under 40 %"
done

# 4. The nodes share the host's kernel and CPUs: lanes counts their processes together (by the
# kernel's boot id), so with LANES_PROGRESS=auto 4 processes on fewer than 4 CPUs wait, though
# each node alone fits its CPUs.
expected=spin
[ "$(nproc)" -lt 4 ] && expected=wait
out=$(LANES_PROGRESS=auto LANES_INFO=1 run "$check" --sizes 7 --colls bcast 2>&1) ||
  { echo "$out"; fail "LANES_PROGRESS=auto run"; }
echo "$out" | grep -m1 "progress "
echo "$out" | grep -q "progress $expected" ||
  fail "LANES_PROGRESS=auto: expected 'progress $expected' for 4 processes on $(nproc) CPUs"

# 5. lanes-bench, where it is built: its own verification of every repetition.
if [ -x "$bench" ] && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  timeout 20 "$bench" --help 2>&1 | grep -q -- '--check'; then
  read -r r0b r1b _ < <(snapshot)
  out=$(run "$bench" --collective bcast,scatter,alltoall --impl lanes --check \
    --counts 1,262144 --reps 3 --warmup 1 2>&1)
  rc=$?
  echo "$out" | tail -12
  [ $rc = 0 ] || fail "lanes-bench --check exit code $rc"
  read -r r0c r1c _ < <(snapshot)
  echo "lanes-bench: rail0 +$((r0c - r0b)) B, rail1 +$((r1c - r1b)) B"
  # 262144 ints = 1 MiB per process and block: at least one collective call's worth per rail.
  if [ $((r0c - r0b)) -lt 1048576 ] || [ $((r1c - r1b)) -lt 1048576 ]; then
    fail "lanes-bench did not move data over both rails"
  fi
else
  echo "(lanes-bench with --check not built: skipped that part)"
fi
echo "testbed_smoke: OK"
