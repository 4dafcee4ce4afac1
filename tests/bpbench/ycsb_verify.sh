#!/bin/sh
# SPDX-License-Identifier: MIT
# ycsb_verify.sh BPBENCH - small YCSB runs with --verify (every record reads
# back its last version, the tree is well formed), then `bpbench check` on
# the kept file after a close and reopen.  A pool of 128 frames is smaller
# than the ~200 leaves, so pages are really evicted and read back.
set -eu
bpbench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
small="-t 8 -r 5000 --frames 128 -q --no-stats-file"

"$bpbench" ycsb -w A -o 2000 $small --verify --file "$dir/a.db" > "$dir/a.out"
grep -q '^verify: OK: 5000 records' "$dir/a.out" || { cat "$dir/a.out"; echo "FAIL: A verify"; exit 1; }
"$bpbench" check --file "$dir/a.db" > "$dir/check.out"
grep -q 'OK: 5000 keys' "$dir/check.out" || { cat "$dir/check.out"; echo "FAIL: check"; exit 1; }

# With page checksums (the store keeps off the pool's trailer): pages are
# evicted and read back verified, every record and the tree check out.
"$bpbench" ycsb -w A -o 2000 $small --verify --checksums --file "$dir/sum.db" > "$dir/sum.out"
grep -q '^verify: OK: 5000 records' "$dir/sum.out" || { cat "$dir/sum.out"; echo "FAIL: checksums verify"; exit 1; }
grep -q ', checksums, ' "$dir/sum.out" || { cat "$dir/sum.out"; echo "FAIL: checksums not on"; exit 1; }

# Three stores in one pool (--files 3: record k in store k % 3, one budget
# of 128 frames for all): every record reads back, every tree checks out,
# and the stores' files are removed after the run.
"$bpbench" ycsb -w A -o 2000 $small --files 3 --verify --file "$dir/f3.db" > "$dir/f3.out" \
  || { cat "$dir/f3.out"; echo "FAIL: --files 3"; exit 1; }
grep -q '^verify: OK: 5000 records' "$dir/f3.out" || { cat "$dir/f3.out"; echo "FAIL: --files 3 verify"; exit 1; }
grep -q '^  3 stores in the one pool' "$dir/f3.out" || { cat "$dir/f3.out"; echo "FAIL: --files 3 config"; exit 1; }
for f in f3.db f3.db.1 f3.db.2; do
  "$bpbench" check --file "$dir/$f" > /dev/null 2>&1 || { echo "FAIL: check $f"; exit 1; }
done

# Who reads a miss (--read-path, bufpool.h's bp_read_path), on each engine,
# and O_DIRECT: every record reads back either way.  The engine path reads
# nothing inline; on a file the kernel has cached (just loaded), the auto
# and cached paths read misses inline.
for e in threads auto; do
  for rp in engine auto cached; do
    out="$dir/rp-$e-$rp.out"
    # Without BP_READ_PATH, which stands for --read-path auto when set (CI's
    # threads setup sets it to engine).
    env -u BP_READ_PATH "$bpbench" ycsb -w A -o 2000 $small --verify --io-engine $e --read-path $rp \
      --file "$dir/rp.db" > "$out" || { cat "$out"; echo "FAIL: $e/$rp"; exit 1; }
    grep -q '^verify: OK: 5000 records' "$out" || { cat "$out"; echo "FAIL: $e/$rp verify"; exit 1; }
    case $rp in
      engine) want='read inline 0 ' ;;
      auto|cached) want='read inline [1-9]' ;;
    esac
    grep -Eq "^misses: .*$want" "$out" || { cat "$out"; echo "FAIL: $e/$rp: no '$want'"; exit 1; }
  done
done
# O_DIRECT: auto reads in the thread that missed, cached sends it all to
# the engine.
for rp in auto cached; do
  out="$dir/direct-$rp.out"
  env -u BP_READ_PATH "$bpbench" ycsb -w A -o 2000 $small --verify --direct --read-path $rp \
    --file "$dir/direct.db" > "$out" || { cat "$out"; echo "FAIL: --direct $rp"; exit 1; }
  grep -q '^verify: OK: 5000 records' "$out" || { cat "$out"; echo "FAIL: --direct $rp verify"; exit 1; }
  case $rp in
    auto) want='read inline [1-9]' ;;
    cached) want='read inline 0 ' ;;
  esac
  grep -Eq "^misses: .*$want" "$out" || { cat "$out"; echo "FAIL: --direct $rp: no '$want'"; exit 1; }
done

# D and E insert (E also scans), F reads and writes back: 2000 ops each.
for w in D E F; do
  "$bpbench" ycsb -w $w -o 2000 $small --verify --json --file "$dir/$w.db" > "$dir/$w.json" 2> "$dir/$w.err" \
    || { cat "$dir/$w.err"; echo "FAIL: workload $w"; exit 1; }
  grep -q '"type":"verify","ok":true' "$dir/$w.json" || { cat "$dir/$w.json"; echo "FAIL: $w verify"; exit 1; }
  "$bpbench" check --file "$dir/$w.db" > /dev/null || { echo "FAIL: check $w"; exit 1; }
done
# --durable: every write returns once it is in the redo log on disk (group
# commit).  A updates, D inserts (with --json, and a small checkpoint
# interval so that checkpoints run while it writes); each verifies, prints
# the log's figures with commits and fsyncs in the run, and the "commit"
# latency row; the kept file checks out after a reopen (which recovers).
"$bpbench" ycsb -w A -o 2000 $small --durable --verify --file "$dir/dA.db" > "$dir/dA.out" \
  || { cat "$dir/dA.out"; echo "FAIL: durable A"; exit 1; }
grep -q '^verify: OK: 5000 records' "$dir/dA.out" || { cat "$dir/dA.out"; echo "FAIL: durable A verify"; exit 1; }
grep -q '^  durable: redo log ' "$dir/dA.out" || { cat "$dir/dA.out"; echo "FAIL: durable A config"; exit 1; }
grep -q '^  commit  ' "$dir/dA.out" || { cat "$dir/dA.out"; echo "FAIL: durable A commit latency"; exit 1; }
# the run's totals line: "       N commits, M fsyncs, ..." after "run:"
awk '/^run:/ { run = 1 } run && $2 == "commits," { exit !($1 > 0 && $3 > 0) } END { if (!run) exit 1 }' \
  "$dir/dA.out" || { cat "$dir/dA.out"; echo "FAIL: durable A: no commits or fsyncs in the run"; exit 1; }
"$bpbench" check --file "$dir/dA.db" > "$dir/dcheck.out" 2>&1
grep -q 'OK: 5000 keys' "$dir/dcheck.out" || { cat "$dir/dcheck.out"; echo "FAIL: durable A check"; exit 1; }
"$bpbench" ycsb -w D -o 2000 $small --durable --checkpoint-bytes 65536 --verify --json \
  --file "$dir/dD.db" > "$dir/dD.json" 2> "$dir/dD.err" || { cat "$dir/dD.err"; echo "FAIL: durable D"; exit 1; }
grep -q '"type":"verify","ok":true' "$dir/dD.json" || { cat "$dir/dD.json"; echo "FAIL: durable D verify"; exit 1; }
grep -q '"type":"log","phase":"run","commits":[1-9][0-9]*,"fsyncs":[1-9]' "$dir/dD.json" \
  || { cat "$dir/dD.json"; echo "FAIL: durable D: no commits or fsyncs in the run"; exit 1; }
grep -q '"type":"latency","op":"commit","count":[1-9]' "$dir/dD.json" \
  || { cat "$dir/dD.json"; echo "FAIL: durable D commit latency"; exit 1; }
"$bpbench" check --file "$dir/dD.db" > /dev/null 2>&1 || { echo "FAIL: check durable D"; exit 1; }
# without --durable nothing of it is printed
if grep -q '"type":"log"\|"durable"' "$dir/D.json"; then echo "FAIL: log figures without --durable"; exit 1; fi
# a damaged file is refused, not crashed on
# (the magic, after the page LSN that opens every page)
printf 'garbage' | dd of="$dir/a.db" bs=1 seek=8 conv=notrunc 2> /dev/null
if "$bpbench" check --file "$dir/a.db" 2> "$dir/bad.err"; then echo "FAIL: check accepted a bad meta page"; exit 1; fi
grep -q 'not a store' "$dir/bad.err" || { cat "$dir/bad.err"; echo "FAIL: message"; exit 1; }
# bad usage exits 2 with a message
set +e
"$bpbench" ycsb -w Z 2> "$dir/usage.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'workload' "$dir/usage.err" || { echo "FAIL: bad usage ($rc)"; exit 1; }
set +e
"$bpbench" ycsb --checkpoint-bytes 65536 2> "$dir/usage.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'needs --durable' "$dir/usage.err" || { echo "FAIL: --checkpoint-bytes alone ($rc)"; exit 1; }
echo "ok"
