#!/bin/sh
# SPDX-License-Identifier: MIT
# tiotest_plot.sh BPBENCH JSON_LINES - bpbench tiotest --plot at two small
# thread counts and two policies: the PNG and its data file are written
# (a row per thread count in each policy's block), the summary names both
# policies, and with --json every stdout line is JSON (one per thread
# count, policy and item: 2 x 2 x 4).
set -eu
bpbench=$1
json_lines=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
small="-t 2 --mb 0.05 --plot-threads 2,3 --policies wake-one,broadcast"

"$bpbench" tiotest $small --plot "$dir/p.png" > "$dir/p.out" 2> "$dir/p.err" \
  || { cat "$dir/p.out" "$dir/p.err"; echo "FAIL: --plot"; exit 1; }
[ -s "$dir/p.png" ] || { echo "FAIL: no PNG"; exit 1; }
grep -q "^# policy wake-one" "$dir/p.png.dat" && grep -q "^# policy broadcast" "$dir/p.png.dat" \
  || { cat "$dir/p.png.dat"; echo "FAIL: data blocks"; exit 1; }
[ "$(grep -c '^[23] ' "$dir/p.png.dat")" -eq 4 ] || { cat "$dir/p.png.dat"; echo "FAIL: data rows"; exit 1; }
grep -q "^bpbench tiotest: wrote $dir/p.png" "$dir/p.out" || { cat "$dir/p.out"; echo "FAIL: summary"; exit 1; }
[ "$(grep -c '^wake-one \|^broadcast ' "$dir/p.out")" -eq 4 ] || { cat "$dir/p.out"; echo "FAIL: summary rows"; exit 1; }

"$json_lines" -- "$bpbench" tiotest $small --plot "$dir/j.png" --json > "$dir/j.out" 2> "$dir/j.err" \
  || { cat "$dir/j.out" "$dir/j.err"; echo "FAIL: --plot --json"; exit 1; }
"$bpbench" tiotest $small --plot "$dir/k.png" --json 2> /dev/null > "$dir/k.json"
[ "$(wc -l < "$dir/k.json")" -eq 16 ] || { cat "$dir/k.json"; echo "FAIL: 16 JSON lines"; exit 1; }
echo "ok"
