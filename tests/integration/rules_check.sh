#!/usr/bin/env bash
# A LANES_RULES file steers selection by size: checks which algorithm rank 0 reports per size.
#   rules_check.sh PROGRAM
set -u
prog=$1
here=$(cd "$(dirname "$0")" && pwd)
rules=$(mktemp --suffix=.json)
trap 'rm -f "$rules"' EXIT
cat > "$rules" <<'JSON'
{"rules": [
  {"collective": "bcast", "max_bytes": 65536, "algorithm": "kported"},
  {"collective": "bcast", "min_bytes": 65536, "algorithm": "scatter-ring-bwsave"}
]}
JSON
out=$(LANES_RULES=$rules LANES_INFO=1 "$here/run_mpi.sh" 5 2 "$prog" --colls bcast --sizes 7,1048579 2>&1)
rc=$?
echo "$out" | grep -E "^lanes: bcast|collectives_check"
[ $rc = 0 ] || { echo "$out" | tail; exit 1; }
echo "$out" | grep -qE "^lanes: bcast of 7 bytes.*: kported$" || { echo "FAIL: small not kported"; exit 1; }
echo "$out" | grep -qE "^lanes: bcast of 1048579 bytes.*: scatter-ring-bwsave$" ||
  { echo "FAIL: large not scatter-ring-bwsave"; exit 1; }
echo "rules chose kported for 7 bytes and scatter-ring-bwsave for 1 MiB + 3"
