#!/usr/bin/env bash
# The whole test suite: unit tests (GoogleTest), integration tests under mpirun, format check.
#   scripts/test.sh [meson test options, e.g. --suite unit]
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
build=${LANES_BUILD_DIR:-build}
meson test -C "$build" --print-errorlogs --num-processes 1 "$@"
rc=$?
# One closing line: "N passed, N failed, N skipped".
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): passed += 1
    elif r == "SKIP": skipped += 1
    else: failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
