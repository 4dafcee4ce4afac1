#!/bin/sh
# SPDX-License-Identifier: MIT
# bpstat_embedder.sh EMBEDDER BPSTAT - an embedder's own program (embedder.c,
# not bpbench) publishes its pool's statistics with bp_stats_publish, and
# bpstat shows them: listed by --list, attached by pid (JSON: hits, ops and
# page 0's waits appear on every line) and by name (the table: no line over
# 80 columns; --wide goes past them).  Then the embedder is killed (SIGKILL:
# its file stays) and bpstat must say the publisher is dead and exit 1.
# Bounded polls only: for the file to appear, nothing else waits.
set -eu
embedder=$1
bpstat=$2
dir=$(mktemp -d)
name=embedtest$$
pid=
trap '[ -n "$pid" ] && { kill -9 $pid 2> /dev/null; rm -f "/dev/shm/bufpool.$pid.$name"; }; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$embedder" $name "$dir/db" 60 > "$dir/embedder.out" 2>&1 &
pid=$!
file=/dev/shm/bufpool.$pid.$name
i=0
while [ ! -e "$file" ]; do
  i=$((i + 1))
  if [ $i -gt 300 ] || ! kill -0 $pid 2> /dev/null; then
    cat "$dir/embedder.out"; fail "no stats file $file"
  fi
  sleep 0.1
done

"$bpstat" --list > "$dir/list"
cat "$dir/list"
grep -q "^$pid\.$name  *live  *$name\$" "$dir/list" || fail "--list: $pid.$name live"

# JSON, by pid: three intervals of 0.3 s
"$bpstat" -n 3 -i 0.3 --json $pid > "$dir/json"
cat "$dir/json"
[ "$(wc -l < "$dir/json")" -eq 3 ] || fail "expected 3 JSON lines"
[ "$(grep -c "^{\"pid\":$pid,\"name\":\"$name\"" "$dir/json")" -eq 3 ] || fail "pid/name"
rate() { sed "s/.*\"rates\":{[^}]*\"$1\":\([0-9.]*\).*/\1/"; }
for what in hits ops; do
  rate $what < "$dir/json" | awk -v w=$what '!($1 > 0) { print "FAIL: rate of " w " " $1; bad = 1 } END { exit bad }' ||
    exit 1
done
grep -q '"page":0,"wait_ns":[1-9]' "$dir/json" || fail "no wait on page 0 in any interval"

# The table, by name: a header and two rows, none past 80 columns
"$bpstat" -n 2 -i 0.3 $name > "$dir/table"
cat "$dir/table"
[ "$(wc -l < "$dir/table")" -eq 3 ] || fail "expected a header and 2 rows"
awk 'length($0) > 80 { print "FAIL: " length($0) " columns: " $0; bad = 1 } END { exit bad }' \
  "$dir/table" || exit 1
"$bpstat" -w -n 1 -i 0.1 $pid.$name > "$dir/wide"
awk 'NR == 1 && length($0) <= 80 { print "FAIL: --wide header fits 80 columns"; bad = 1 } END { exit bad }' \
  "$dir/wide" || exit 1

# Killed: the file stays, bpstat says the publisher is dead, exits 1
kill -9 $pid
wait $pid 2> /dev/null || true
[ -e "$file" ] || fail "SIGKILL removed the file?"
set +e
"$bpstat" -n 1 -i 0.1 $pid > "$dir/dead.out" 2> "$dir/dead.err"
rc=$?
set -e
cat "$dir/dead.err"
[ $rc -eq 1 ] || fail "bpstat on a dead publisher: exit status $rc"
grep -q "publisher $pid ($name) is dead" "$dir/dead.err" || fail "no 'dead' message"
[ ! -s "$dir/dead.out" ] || fail "figures shown for a dead publisher"
"$bpstat" --list | grep -q "^$pid\.$name  *dead " || fail "--list: not dead"
rm -f "$file"
pid=
echo "ok"
