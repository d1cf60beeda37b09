#!/usr/bin/env bash
# The whole test suite:
#   1. unit tests (GoogleTest), integration tests under mpirun, style checks;
#   2. the unit tests and a set of integration tests again, built with AddressSanitizer and
#      UndefinedBehaviorSanitizer, leaks included (LANES_SANITIZERS=0 skips this stage);
#   3. the unit tests that run several ranks on threads of one process, built with
#      ThreadSanitizer (LANES_TSAN=0 skips this stage);
#   4. a bounded run of each libFuzzer target (clang, ASan and UBSan; LANES_FUZZ=0 skips it).
#   scripts/test.sh [meson test options, e.g. --suite unit]   (options apply to stage 1)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
build=${LANES_BUILD_DIR:-build}
asan=$build-sanitize tsan=$build-tsan fuzz=$build-fuzz
logs=()

# The instrumented trees of stages 2-4 and what they build: the ASan tree the programs its tests
# run (by meson's introspection of the tests), the others theirs (the fuzz tree: its targets and
# what they link: the parsers and algos/).
asan_unit_tests=(unit/topology unit/bootstrap unit/layout 'unit/schedules shard 0'
  'unit/schedules shard 1' unit/config unit/cost_model unit/rules unit/shm unit/runtime
  unit/stripe unit/reduction_algorithms unit/scratch_pool unit/selection unit/lru_map
  unit/fragments unit/rails unit/vcollectives unit/group_search unit/startup_wire unit/host_cpus)
# 'collectives two-rails np4 node2' runs the np4 node2 layout with striping on top, so the plain
# np4 node2 run is left to stage 1; 'collectives staged-shm np3 node2' stands for the irregular
# layouts (a node of 2 and one of 1), whose plain runs are left to stage 1 too.
asan_integration_tests=('collectives staged-shm np3 node2' 'collectives shared-heap np4 node2'
  'collectives two-rails np4 node2' 'misuse LANES_CHECK np3 node2' 'sigkill mid-bcast victim1'
  'mismatch revokes np4 node2' 'example pmix np3 node2' 'lanes-info np4 node2'
  'start-up failures agree np4 node2' 'split segment failure agrees np4 node2'
  'v-collectives np4 node2' 'hierarchy groups searched, fixed, invalid np4 node2')
asan_targets() {
  meson introspect "$asan" --tests --targets | python3 -c '
import json, os, sys
tree, names = sys.argv[1], set(sys.argv[2:])
info = json.load(sys.stdin)
tests = [t for t in info["tests"] if t["name"] in names]
missing = names - {t["name"] for t in tests}
if missing:
    sys.exit("scripts/test.sh: no such tests: " + ", ".join(sorted(missing)))
ids = {d for t in tests for d in t["depends"]}
for target in info["targets"]:
    if target["id"] in ids:
        for f in target["filename"]:
            print(os.path.relpath(f, tree))
' "$asan" "${asan_unit_tests[@]}" "${asan_integration_tests[@]}"
}
tsan_targets=(tests/unit/unit_runtime tests/unit/unit_shm tests/unit/unit_agreement
  tests/unit/unit_bootstrap)
fuzz_targets=(tests/fuzz/fuzz_rules tests/fuzz/fuzz_calibration tests/fuzz/fuzz_config
  tests/fuzz/fuzz_startup_record)
# A tree counts as configured once its marker exists: a configuration stopped half-way (below)
# is wiped and done again.
configure() {
  local dir=$1; shift
  [ -f "$dir/.lanes-configured" ] && return 0
  rm -rf "$dir"
  meson setup "$dir" "$@" >/dev/null && touch "$dir/.lanes-configured"
}
# A build that prints nothing unless it fails; then the errors (a second run) and the script stops.
build_quietly() {
  local dir=$1
  shift
  ninja -C "$dir" "$@" >/dev/null || { ninja -C "$dir" "$@"; exit 1; }
}
setup_asan() {
  configure "$asan" -Dbuildtype=debug -Db_sanitize=address,undefined -Dwerror=true \
    -Dbenchmarks=disabled
}
setup_tsan() {
  configure "$tsan" -Dbuildtype=debug -Db_sanitize=thread -Dwerror=true -Dbenchmarks=disabled
}
setup_fuzz() {
  # -O0: the targets compile in half the time, and 15 s still run 10^4-10^5 inputs each.
  CC=clang CXX=clang++ configure "$fuzz" -Dbuildtype=debug -Dfuzz=true \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args=-fsanitize=fuzzer-no-link \
    -Dwerror=true -Dbenchmarks=disabled
}

# While stage 1 runs, its integration tests leave the cores idle much of the time (start-ups,
# processes waiting on each other): the later stages' trees build meanwhile at the idle priority
# (SCHED_IDLE: they run only where no test wants the core). meson starts each test in a session of
# its own, which the kernel's autogroups weigh against every other session alike, so the build's
# session takes the lowest weight too (nice 19 on /proc/self/autogroup); without that stage 1's
# unit tests ran 1.5-2x longer. Whatever is left when stage 1 ends is
# built in the foreground by each stage, as if this had not run; a failure here is reported there.
early=
if [ $# -eq 0 ]; then
  early_build() {
    if [ "${LANES_SANITIZERS:-1}" != 0 ]; then
      setup_asan && mapfile -t targets < <(asan_targets) && ninja -C "$asan" "${targets[@]}"
    fi
    if [ "${LANES_TSAN:-1}" != 0 ]; then setup_tsan && ninja -C "$tsan" "${tsan_targets[@]}"; fi
    if [ "${LANES_FUZZ:-1}" != 0 ]; then setup_fuzz && ninja -C "$fuzz" "${fuzz_targets[@]}"; fi
  }
  # A session of its own, so that it can be stopped whole (ninja and its compilers).
  setsid chrt --idle 0 bash -c "$(declare -p asan tsan fuzz asan_unit_tests asan_integration_tests \
    tsan_targets fuzz_targets)
    $(declare -f configure setup_asan setup_tsan setup_fuzz asan_targets early_build)
    [ -w /proc/self/autogroup ] && echo 19 > /proc/self/autogroup
    early_build" >/dev/null 2>&1 &
  early=$!
fi
stop_early_build() {
  [ -n "$early" ] || return 0
  kill -TERM -- "-$early" 2>/dev/null
  wait "$early" 2>/dev/null
  early=
}
trap stop_early_build EXIT

if [ $# -eq 0 ]; then
  # Unit tests are pure computation in one process each: two at a time on the two cores. The
  # integration tests each start a job of their own: one at a time.
  meson test -C "$build" --print-errorlogs --num-processes 2 --suite unit --logbase unit
  rc=$?
  meson test -C "$build" --print-errorlogs --num-processes 1 --no-suite unit
  rc1=$?
  [ $rc = 0 ] && rc=$rc1
  logs+=("$build/meson-logs/unit.json" "$build/meson-logs/testlog.json")
  stop_early_build
else
  meson test -C "$build" --print-errorlogs --num-processes 1 "$@"
  rc=$?
  logs+=("$build/meson-logs/testlog.json")
fi

if [ "${LANES_SANITIZERS:-1}" != 0 ] && [ $# -eq 0 ]; then
  setup_asan || exit 1
  mapfile -t targets < <(asan_targets)
  [ ${#targets[@]} -gt 0 ] || exit 1
  build_quietly "$asan" "${targets[@]}"
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
  # The simulator sweeps over every algorithm and scale (unit/*_algorithms and the generic sweep
  # in unit/schedules) are pure code already run in stage 1; under the sanitizers they would take
  # most of the budget.
  GTEST_FILTER='-Registry/EveryAlgorithm.*:Registry/EveryReduction.*:AllreduceFullLane.CorrectOnRegularLayouts:BarrierDissemination.EveryRankHearsFromEveryRank' \
    meson test -C "$asan" --no-rebuild --print-errorlogs --num-processes 2 --logbase unit \
    "${asan_unit_tests[@]}"
  rc2=$?
  meson test -C "$asan" --no-rebuild --print-errorlogs --num-processes 1 --logbase integration \
    "${asan_integration_tests[@]}"
  rc3=$?
  [ $rc = 0 ] && rc=$rc2
  [ $rc = 0 ] && rc=$rc3
  logs+=("$asan/meson-logs/unit.json" "$asan/meson-logs/integration.json")
fi

if [ "${LANES_TSAN:-1}" != 0 ] && [ $# -eq 0 ]; then
  setup_tsan || exit 1
  # The unit tests that run several ranks, or both ends of a channel, on threads of one process.
  build_quietly "$tsan" "${tsan_targets[@]}"
  # UCX's memory hooks (libucm) intercept madvise in exiting threads, which ThreadSanitizer's
  # runtime does not survive; the tests' transfers do not need them.
  UCX_MEM_EVENTS=no TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    meson test -C "$tsan" --no-rebuild --print-errorlogs --num-processes 2 --logbase tsan \
    unit/runtime unit/shm unit/agreement unit/bootstrap
  rc5=$?
  [ $rc = 0 ] && rc=$rc5
  logs+=("$tsan/meson-logs/tsan.json")
fi

if [ "${LANES_FUZZ:-1}" != 0 ] && [ $# -eq 0 ]; then
  setup_fuzz || exit 1
  build_quietly "$fuzz" "${fuzz_targets[@]}"
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C "$fuzz" --no-rebuild --print-errorlogs --num-processes 2 --suite fuzz \
    --logbase fuzz
  rc4=$?
  [ $rc = 0 ] && rc=$rc4
  logs+=("$fuzz/meson-logs/fuzz.json")
fi

# One closing line over every stage: "N passed, N failed, N skipped".
python3 - "${logs[@]}" <<'PY'
import json, sys
passed = failed = skipped = 0
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1
        else: failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
