#!/bin/sh
# SPDX-License-Identifier: MIT
# bpstat_live.sh BPBENCH BPSTAT - bpstat follows a running bpbench through
# its stats file: wait (bounded poll) for the file, read 3 lines of JSON,
# check they carry the publisher's pid and name and growing counters, then
# stop bpbench with SIGTERM and check it removed its file.
set -eu
bpbench=$1
bpstat=$2
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2> /dev/null; rm -rf "$dir"' EXIT
"$bpbench" ycsb -w C -t 2 -r 2000 --frames 64 -d 120 -q --file "$dir/db" \
  --stats-file "$dir/stats" > "$dir/bench.out" 2>&1 &
pid=$!
i=0
while [ ! -e "$dir/stats" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 $pid 2> /dev/null; then cat "$dir/bench.out"; echo "FAIL: no stats file"; exit 1; fi
  sleep 0.1
done
"$bpstat" -n 3 -i 0.2 --json "$dir/stats" > "$dir/bpstat.out"
cat "$dir/bpstat.out"
[ "$(wc -l < "$dir/bpstat.out")" -eq 3 ] || { echo "FAIL: expected 3 lines"; exit 1; }
grep -c "\"pid\":$pid,\"name\":\"ycsb-C\"" "$dir/bpstat.out" | grep -q 3 || { echo "FAIL: pid/name"; exit 1; }
last=$(tail -n 1 "$dir/bpstat.out")
hits=$(echo "$last" | sed 's/.*"totals":{"hits":\([0-9]*\),"misses":\([0-9]*\).*/\1/')
misses=$(echo "$last" | sed 's/.*"totals":{"hits":\([0-9]*\),"misses":\([0-9]*\).*/\2/')
[ "$hits" -gt 0 ] && [ "$misses" -ge 2 ] || { echo "FAIL: hits=$hits misses=$misses"; exit 1; }
kill -TERM $pid
set +e
wait $pid
rc=$?
set -e
pid=
[ $rc -le 1 ] || { cat "$dir/bench.out"; echo "FAIL: bpbench exit status $rc"; exit 1; }
[ ! -e "$dir/stats" ] || { echo "FAIL: stats file left behind"; exit 1; }
# a missing file is an error with a message
if "$bpstat" -n 1 "$dir/stats" 2> "$dir/err"; then echo "FAIL: bpstat on a missing file"; exit 1; fi
grep -q 'No such file' "$dir/err" || { cat "$dir/err"; exit 1; }
echo "ok"
