#!/usr/bin/env bash
# Fails when a source includes across the layers' rules (README, Architecture):
#   algos/      the C++ standard library and lanes/error.hpp only (no UCX, hwloc, PMIx, MPI, no
#               system headers);
#   topo/       topo/, lanes/error.hpp and system headers; hwloc is topo's alone;
#   transport/  transport/, lanes/error.hpp and system headers (UCX, PMIx), never algos/, topo/,
#               lib/ or hwloc;
#   mpi/        mpi/ and lanes' public API (<lanes/...>) only: liblanes_mpi is built on it;
#   lib/        composes them all.
# lanes/error.hpp is the base every layer may use: lanes::Error and lanes::Errc.
cd "$(dirname "$0")/.."
fail=0
# check LAYER ALLOWED_REGEX: every #include in LAYER's files must match ALLOWED_REGEX.
check() {
  local layer=$1 allowed=$2 file line
  while IFS= read -r file; do
    while IFS= read -r line; do
      if ! [[ "$line" =~ $allowed ]]; then
        echo "$file: '$line' crosses the layers ($layer/ may include: $allowed)"
        fail=1
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file" | sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//; s/[[:space:]]*(\/\/.*)?$//')
  done < <(find "$layer" -name '*.[ch]pp' -o -name '*.[ch]' | sort)
}
error='[<"]lanes/error\.hpp[>"]'
std='<[a-z_]+>'                     # <vector>, <cstdio>: the C++ standard library
sys='<[a-z0-9_/]+\.h>'              # <sys/mman.h>, <ucp/api/ucp.h>, <pmix.h>
check algos "^($std|$error|\"algos/[a-z0-9_/]+\.(hpp|def)\")\$"
check topo "^($std|$sys|$error|\"topo/[a-z0-9_/]+\.hpp\")\$"
check transport "^($std|$sys|$error|\"transport/[a-z0-9_/]+\.hpp\")\$"
check mpi "^($std|<mpi\.h>|<lanes/[a-z_]+\.hpp>|\"mpi/[a-z0-9_/]+\.hpp\")\$"
# hwloc belongs to topo/ alone (bash regexes have no look-ahead: a separate check).
if grep -rlE '#[[:space:]]*include[[:space:]]*<hwloc' algos transport lib mpi >/dev/null; then
  grep -rlE '#[[:space:]]*include[[:space:]]*<hwloc' algos transport lib mpi | sed 's/$/: includes hwloc, which is topo'"'"'s alone/'
  fail=1
fi
[ $fail = 0 ] && echo "layers: every include within its layer's rules"
exit $fail
