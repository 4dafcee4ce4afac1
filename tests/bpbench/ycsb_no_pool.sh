#!/bin/sh
# SPDX-License-Identifier: MIT
# ycsb_no_pool.sh BPBENCH - bpbench ycsb --no-pool: workload C on the pool,
# then the same reads on the tree copied to plain memory (the floor).
# Both phases must do every operation asked for (--ops) and check each
# value they read (a wrong one fails the run), the "floor" JSON line must
# carry both phases' figures and ratios that are the quotients of those
# figures, the human report the two rows and the ratio line, and the run
# write nothing (the load's pages are written back before it); with three
# stores each is copied.  A pool of 128 frames is smaller than the ~200
# leaves, so the copy reads evicted pages back through the pool.  A
# workload that writes is refused (exit 2, with a message).
set -eu
bpbench=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
small="-w C -t 2 -r 5000 --frames 128 -o 20000 -q --no-stats-file --no-pool"

check_floor() { # FILE.json FILE.err: the floor line, 20000 lookups a phase
  python3 - "$1" <<'PY' || { cat "$2"; cat "$1"; echo "FAIL: floor line ($1)"; exit 1; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
f = [l for l in lines if l.get("type") == "floor"]
r = [l for l in lines if l.get("type") == "result"]
assert len(f) == 1 and len(r) == 1, "one floor and one result line"
f, r = f[0], r[0]
assert f["pool_ops"] == r["ops"] == 20000, "the pool phase did every op"
assert f["floor_ops"] == 20000, "the floor did every op"
assert f["pages"] > 100 and f["bytes"] == f["pages"] * 4096, "the copy"
for k in ("pool_ops_per_s", "pool_ops_per_cpu_s", "floor_ops_per_s", "floor_ops_per_cpu_s"):
    assert f[k] > 0, k
def near(a, b):
    return abs(a - b) <= 1e-3 * max(abs(a), abs(b)) + 1e-4
assert near(f["ratio_ops_per_s"], f["pool_ops_per_s"] / f["floor_ops_per_s"]), "ratio per s"
assert near(f["ratio_ops_per_cpu_s"], f["pool_ops_per_cpu_s"] / f["floor_ops_per_cpu_s"]), \
    "ratio per CPU-second"
p = [l for l in lines if l.get("type") == "pool_stats"][0]["stats"]["counters"]
assert p["writes"] == 0, "the load's pages were written back before the run"
PY
}

"$bpbench" ycsb $small --verify --json --file "$dir/c.db" > "$dir/c.json" 2> "$dir/c.err" \
  || { cat "$dir/c.err"; echo "FAIL: --no-pool run"; exit 1; }
check_floor "$dir/c.json" "$dir/c.err"
grep -q '"type":"verify","ok":true' "$dir/c.json" || { cat "$dir/c.json"; echo "FAIL: verify"; exit 1; }
grep -q '"no_pool":true' "$dir/c.json" || { cat "$dir/c.json"; echo "FAIL: config"; exit 1; }
# the human report (stderr with --json): both rows, 20000 lookups each
grep -q '^  pool  *20000 ' "$dir/c.err" || { cat "$dir/c.err"; echo "FAIL: pool row"; exit 1; }
grep -q '^  floor  *20000 ' "$dir/c.err" || { cat "$dir/c.err"; echo "FAIL: floor row"; exit 1; }
grep -q '^  pool/floor: [0-9.]*x lookups/s, [0-9.]*x lookups per CPU-second' "$dir/c.err" \
  || { cat "$dir/c.err"; echo "FAIL: ratio line"; exit 1; }

# three stores in one pool: each is copied, record k read in copy k % 3
"$bpbench" ycsb $small --files 3 --json --file "$dir/f3.db" > "$dir/f3.json" 2> "$dir/f3.err" \
  || { cat "$dir/f3.err"; echo "FAIL: --no-pool --files 3"; exit 1; }
check_floor "$dir/f3.json" "$dir/f3.err"

# without --no-pool there is no floor
"$bpbench" ycsb -w C -t 2 -r 2000 -o 1000 -q --no-stats-file --json > "$dir/plain.json" 2> /dev/null
if grep -q '"type":"floor"\|"no_pool"' "$dir/plain.json"; then echo "FAIL: floor without --no-pool"; exit 1; fi

# every workload that writes is refused: exit 2, with a message
for w in A B D E F; do
  set +e
  "$bpbench" ycsb -w $w --no-pool -r 100 -o 100 --no-stats-file 2> "$dir/usage.err" > "$dir/usage.out"; rc=$?
  set -e
  [ $rc -eq 2 ] && grep -q -- "--no-pool needs a read-only workload (C), and workload $w writes" "$dir/usage.err" \
    || { cat "$dir/usage.err"; echo "FAIL: --no-pool with workload $w ($rc)"; exit 1; }
  [ ! -s "$dir/usage.out" ] || { echo "FAIL: workload $w ran"; exit 1; }
done
echo "ok"
