#!/usr/bin/env bash
# The library keeps no mutable globals (style guide B5): every object hangs off an ec_ctx,
# so several contexts can run on several threads.  objdump lists each symbol's section:
# writable ones live in .data or .bss.  Tables of pointers declared static const land in
# .data.rel.ro under -fPIC: read-only after relocation, so they are allowed.
set -euo pipefail
lib=$1
found=$(objdump -t "$lib" | awk '$0 ~ /[[:space:]](\.data|\.bss)([[:space:]]|\.)/ && $0 !~ /\.data\.rel\.ro/ && $NF !~ /^\./ && $NF !~ /asan|ubsan|__odr/' || true)
if [ -n "$found" ]; then
  echo "mutable globals in $lib:"; echo "$found"; exit 1
fi
echo "no mutable globals in $(basename "$lib")"
