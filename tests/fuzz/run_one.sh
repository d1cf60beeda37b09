#!/usr/bin/env bash
# One bounded libFuzzer run: run_one.sh FUZZER SEEDS WORKDIR SECONDS
# New inputs go to WORKDIR/corpus (the seeds in the tree stay as they are), a crashing input to
# WORKDIR/crash-*, which the log names. A finding exits 1 (libFuzzer's own 77 would read as "skipped").
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work/corpus"
exec "$fuzzer" "$work/corpus" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -error_exitcode=1 -artifact_prefix="$work/"
