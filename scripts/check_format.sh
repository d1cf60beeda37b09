#!/usr/bin/env bash
# Fails when a C or C++ source differs from .clang-format.
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.c' 2>/dev/null || find . -name '*.[ch]pp' -not -path './build*')
[ -z "$files" ] && files=$(find algos lib topo transport tests examples bench -name '*.[ch]pp')
clang-format --dry-run --Werror $files
