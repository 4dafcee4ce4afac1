#!/bin/sh
# SPDX-License-Identifier: MIT
# kv_symbols.sh NM LIBKV - every global symbol libkv.a defines starts with
# kv_ (the store's prefix, its internal header's helpers included), so
# linking the store can never clash with a program's own names.
set -eu
nm=$1
lib=$2
syms=$("$nm" -g --defined-only "$lib" | awk 'NF == 3 { print $3 }')
[ -n "$syms" ] || { echo "FAIL: no symbols in $lib"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v '^kv_' || true)
[ -z "$bad" ] || { echo "FAIL: not kv_-prefixed:"; printf '%s\n' "$bad"; exit 1; }
echo "ok: $(printf '%s\n' "$syms" | wc -l) symbols, all kv_"
