#!/usr/bin/env bash
# Runs a program with LANES_<COLL>_ALGORITHM=<name> and LANES_INFO=1, and checks both that it
# passed and that rank 0 reported running <name> for that collective.
#   env_algorithm_check.sh LANES_<COLL>_ALGORITHM=<name> NP NODE_SIZE PROGRAM [ARGS...]
set -u
setting=$1; shift
var=${setting%%=*} name=${setting#*=}
coll=$(echo "$var" | sed -E 's/^LANES_(.*)_ALGORITHM$/\1/' | tr 'A-Z' 'a-z')
here=$(cd "$(dirname "$0")" && pwd)
out=$(env "$setting" LANES_INFO=1 "$here/run_mpi.sh" "$@" 2>&1)
rc=$?
echo "$out" | grep -E "^lanes: $coll |collectives_check|FAIL" | head -20
[ $rc = 0 ] || { echo "$out" | tail -20; exit $rc; }
if ! echo "$out" | grep -qE "^lanes: $coll of [0-9]+ bytes.*: $name\$"; then
  echo "FAIL: $coll did not run $name"
  exit 1
fi
echo "$coll ran $name as $var asked"
