#!/usr/bin/env bash
# The README's configuration table must be the one lanes-info prints (the table in lib/config.cpp).
set -u
info=$1 readme=$2
if ! diff <("$info" --config-markdown | grep '^| `LANES_') <(grep '^| `LANES_' "$readme"); then
  echo "FAIL: README.md's configuration table differs from 'lanes-info --config-markdown'"
  exit 1
fi
echo "README configuration table matches lanes-info"
