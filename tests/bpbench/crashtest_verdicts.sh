#!/bin/sh
# SPDX-License-Identifier: MIT
# crashtest_verdicts.sh BPBENCH - bpbench crashtest's exit statuses and files
# (the passing run itself is its own test in meson.build):
#   - bad usage exits 2 with a message;
#   - a deliberately broken pool (--break-wal: pages written without the
#     write-ahead rule) exits exactly 1 with a round's failure: 1, not just
#     "non-zero", so a crash or a usage error cannot pass for a catch.
#     Batches of 1024 commits on a key space of 200000 keep the tree
#     splitting while a pool of 40 frames evicts pages ahead of the log.
#     The kill's instant is timing's, so the failing round varies: seed 1
#     run 40 times failed every time, by round 9 at the latest (with 128
#     frames once only in round 34, hence 40 frames and 100 kills), and 60
#     other seeds all failed.  A pass would take about 75 s (what the
#     correct pool takes for these 100 rounds).  With sync_commit it never
#     fails: each put's log is on disk before any page write could need
#     it; with batches of 32 on 128 frames, 1 to 4 seeds in 10 fail;
#   - the store's three files are removed after a run, kept with --keep;
#   - --power-loss: bad usage exits 2; a broken pool (--break-wal, batches
#     of 32, no truncating reopen: meson.build's should_fail test says why)
#     exits exactly 1 with the "FAILED:" summary and a failing state's
#     cut; the run's directory is removed after a run, kept with --keep
#     (the trace and the store in it).
set -eu
bpbench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

expect() { # expect STATUS ARGS...: run crashtest, want that exit status
  want=$1; shift
  set +e
  "$bpbench" crashtest "$@" > "$dir/out" 2> "$dir/err"; rc=$?
  set -e
  [ $rc -eq "$want" ] || { cat "$dir/out" "$dir/err"; echo "FAIL: crashtest $* exited $rc, not $want"; exit 1; }
}

expect 2 --kills 0
grep -q -- '--kills' "$dir/err" || { cat "$dir/err"; echo "FAIL: no message for --kills 0"; exit 1; }
expect 2 --threads 8 --frames 32
grep -q 'too small' "$dir/err" || { cat "$dir/err"; echo "FAIL: no message for --frames"; exit 1; }
expect 2 --keys 3 --threads 4
expect 2 --no-such-option
expect 2 extra-argument

expect 1 --kills 100 --seed 1 --batch 1024 --keys 200000 --frames 40 --break-wal -q --file "$dir/broken.db"
grep -q 'crashtest: round [0-9]*: ' "$dir/err" && grep -q 'FAILED in round' "$dir/err" \
  || { cat "$dir/err"; echo "FAIL: the broken pool's failure is not reported"; exit 1; }

expect 0 --kills 2 -q --file "$dir/gone.db"
if ls "$dir"/gone.db* > /dev/null 2>&1; then ls "$dir"; echo "FAIL: files left behind"; exit 1; fi
expect 0 --kills 2 -q --keep --file "$dir/kept.db"
for f in kept.db kept.db.wal kept.db.ctl; do
  [ -e "$dir/$f" ] || { ls "$dir"; echo "FAIL: --keep lost $f"; exit 1; }
done
# what --keep kept is a store that reopens and checks out
"$bpbench" check --file "$dir/kept.db" > /dev/null || { echo "FAIL: the kept store does not check"; exit 1; }
expect 2 --power-loss --batch 300
grep -q -- '--batch' "$dir/err" || { cat "$dir/err"; echo "FAIL: no message for --batch"; exit 1; }
expect 2 --power-loss --states 0
expect 1 --power-loss --truncate-every 0 --seed 1 --batch 32 --break-wal -q --file "$dir/pl-wal"
grep -q 'power-loss: state [0-9]*: a power failure after event' "$dir/err" &&
  grep -q 'power-loss: FAILED: ' "$dir/err" ||
  { tail -20 "$dir/err"; echo "FAIL: the power-loss failure is not reported"; exit 1; }
expect 0 --power-loss --truncate-every 0 --states 50 -k 2 -q --file "$dir/pl-gone"
if [ -e "$dir/pl-gone" ]; then ls -R "$dir"; echo "FAIL: --power-loss left files behind"; exit 1; fi
expect 0 --power-loss --truncate-every 0 --states 50 -k 2 -q --keep --file "$dir/pl-kept"
for f in trace store.db store.db.wal store.db.ctl; do
  [ -e "$dir/pl-kept/$f" ] || { ls "$dir/pl-kept"; echo "FAIL: --power-loss --keep lost $f"; exit 1; }
done
echo "ok"
