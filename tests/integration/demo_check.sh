#!/usr/bin/env bash
# The README's first command with small sizes: scripts/demo.sh on the build under test. Every
# row of both parts (one node; 2 emulated nodes x 2 rails) must say ok, the two-rail part must
# compare one lane, two lanes and MPI, and the emulated cluster must be gone afterwards.
#   demo_check.sh SOURCE_ROOT BUILD_ROOT
# Exits 77 where the two-rail part cannot run (not root, no network namespaces) after the
# one-node part passed.
set -u
src=$1 build=$2
testbed=$src/bench/testbed/lanes-testbed
fail() { echo "FAIL: $*"; exit 1; }
if "$testbed" status >/dev/null 2>&1; then
  echo "SKIP: an emulated cluster is up; the demo leaves it alone"
  exit 77
fi
out=$(LANES_DEMO_SETUP=0 LANES_BUILD_DIR=$build timeout 240 "$src/scripts/demo.sh" \
  --sizes 1024,65536 --reps 3 2>&1)
rc=$?
echo "$out"
[ $rc = 0 ] || fail "scripts/demo.sh exited $rc"
! grep -q WRONG <<<"$out" || fail "a result was wrong"
"$testbed" status >/dev/null 2>&1 && fail "the emulated cluster is still up"
one_node=$(sed -n '/^== 1\./,/^== 2\./p' <<<"$out" | grep -c '| ok |$')
[ "$one_node" = 6 ] || fail "one-node part: $one_node rows ok, expected 6"
if grep -q '^skipped:' <<<"$out"; then
  echo "SKIP: two-rail part: $(grep '^skipped:' <<<"$out")"
  exit 77
fi
two_rails=$(sed -n '/^== 2\./,$p' <<<"$out")
grep -q '| lanes, 1 lane avg us | lanes, 2 lanes avg us | MPI avg us |' <<<"$two_rails" ||
  fail "two-rail part: no columns for one lane, two lanes and MPI"
rows=$(grep -c '| ok |$' <<<"$two_rails")
[ "$rows" = 6 ] || fail "two-rail part: $rows rows ok, expected 6"
grep -q '2 lanes are .*x faster than 1' <<<"$two_rails" || fail "two-rail part: no reading"
echo "demo_check: both parts ok"
