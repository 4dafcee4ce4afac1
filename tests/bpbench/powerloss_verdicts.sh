#!/bin/sh
# powerloss_verdicts.sh BPBENCH - bpbench crashtest --power-loss's exit
# statuses and files (the passing run is its own test in meson.build):
#   - bad usage exits 2 with a message (a --batch whose acks do not fit
#     one pipe write);
#   - a deliberately broken pool (--break-wal) exits exactly 1 with the
#     "FAILED:" summary and a failing state's cut: 1, not just non-zero,
#     so a crash or a usage error cannot pass for a catch (the options are
#     meson.build's should_fail test's, which says why these; the broken
#     recovery's 30 s run is only there);
#   - the run's directory is removed after a run, kept with --keep (the
#     trace and the store in it).
set -eu
bpbench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

expect() { # expect STATUS ARGS...: run crashtest, want that exit status
  want=$1; shift
  set +e
  "$bpbench" crashtest "$@" > "$dir/out" 2> "$dir/err"; rc=$?
  set -e
  [ $rc -eq "$want" ] || { tail -20 "$dir/out" "$dir/err"; echo "FAIL: crashtest $* exited $rc, not $want"; exit 1; }
}
caught() { # caught: the last run's failure names a state and its cut
  grep -q 'power-loss: state [0-9]*: a power failure after event' "$dir/err" &&
    grep -q 'power-loss: FAILED: ' "$dir/err" ||
    { tail -20 "$dir/err"; echo "FAIL: the failure is not reported"; exit 1; }
}

expect 2 --power-loss --batch 300
grep -q -- '--batch' "$dir/err" || { cat "$dir/err"; echo "FAIL: no message for --batch"; exit 1; }
expect 2 --power-loss --states 0

expect 1 --power-loss --truncate-every 0 --seed 1 --batch 32 --break-wal -q --file "$dir/wal"
caught

expect 0 --power-loss --states 50 -k 2 -q --file "$dir/gone"
if [ -e "$dir/gone" ]; then ls -R "$dir"; echo "FAIL: files left behind"; exit 1; fi
expect 0 --power-loss --states 50 -k 2 -q --keep --file "$dir/kept"
for f in trace store.db store.db.wal store.db.ctl; do
  [ -e "$dir/kept/$f" ] || { ls "$dir/kept"; echo "FAIL: --keep lost $f"; exit 1; }
done
echo "ok"
