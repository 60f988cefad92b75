#!/usr/bin/env bash
# The library keeps no mutable globals (style guide B5): every object hangs off an ec_ctx,
# so several contexts can run on several threads. nm lists writable data (B/b bss, D/d data).
set -euo pipefail
lib=$1
found=$(nm -A "$lib" | grep -E ' [BbDd] ' | grep -v -E ' (__odr_asan|__asan|__ubsan|___asan)' || true)
if [ -n "$found" ]; then
  echo "mutable globals in $lib:"; echo "$found"; exit 1
fi
echo "no mutable globals in $(basename "$lib")"
