#!/bin/sh
# SPDX-License-Identifier: MIT
# ycsb_ref.sh YCSB_REF BPBENCH ENGINE - ycsb-ref on ENGINE runs bpbench
# ycsb's operation stream: workload A, 2 threads, 2000 records, 2000 ops
# (--ops: a fixed count, so the stream is the seed's alone).  Its JSON
# lines parse; the result line says 2000 ops and ops_per_s > 0 with the CPU
# keys bpbench uses; the per-op latency counts (read, update, all) equal
# bpbench ycsb's for the same seed (the same generator, seeding, quotas
# and mix: a difference means the two programs do not run the same
# workload); the directory it made is removed; usage errors exit 2.
set -eu
ref=$1 bpbench=$2 engine=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
args="-w A -t 2 -r 2000 -o 2000 --seed 5 --json -q"

"$ref" --engine "$engine" $args > "$dir/ref.json" 2> "$dir/ref.err" \
  || { cat "$dir/ref.err"; echo "FAIL: ycsb-ref --engine $engine"; exit 1; }
"$bpbench" ycsb $args --no-stats-file --file "$dir/bp.db" > "$dir/bp.json" 2> "$dir/bp.err" \
  || { cat "$dir/bp.err"; echo "FAIL: bpbench ycsb"; exit 1; }
python3 - "$dir/ref.json" "$dir/bp.json" "$engine" <<'PY' || { cat "$dir/ref.err"; exit 1; }
import json, os, sys
ref = [json.loads(l) for l in open(sys.argv[1])]
bp = [json.loads(l) for l in open(sys.argv[2])]
def one(lines, t):
    m = [l for l in lines if l.get("type") == t]
    assert len(m) == 1, "one %s line, got %d" % (t, len(m))
    return m[0]
cfg, load, res = one(ref, "config"), one(ref, "load"), one(ref, "result")
assert cfg["engine"] == sys.argv[3] and res["engine"] == sys.argv[3], "the engine asked for"
assert load["records"] == 2000 and load["ops_per_s"] > 0, "the load"
assert res["ops"] == 2000 and res["ops_per_s"] > 0, "every op of the run: %r" % res
for k in ("cpu_user_us_per_op", "cpu_sys_us_per_op", "vcsw_per_op", "ivcsw_per_op"):
    assert k in res and res[k] >= 0, k
assert k in one(bp, "result"), "bpbench's result line has the same keys"
counts = lambda lines: {l["op"]: l["count"] for l in lines if l.get("type") == "latency"}
assert counts(ref) == counts(bp), "per-op counts: ycsb-ref %r, bpbench %r" % (counts(ref), counts(bp))
assert counts(ref)["read"] > 0 and counts(ref)["update"] > 0, "a mix of both"
assert not os.path.exists(cfg["dir"]), "the temporary directory %s is left" % cfg["dir"]
PY
# bad usage: exit 2 with a message
for bad in "-t 0" "--value-size 8" "--cache-bytes 1000" "--dist latest" "extra"; do
  rc=0
  "$ref" --engine "$engine" $bad > /dev/null 2> "$dir/bad.err" || rc=$?
  [ "$rc" -eq 2 ] && [ -s "$dir/bad.err" ] || { echo "FAIL: '$bad' exited $rc"; exit 1; }
done
echo "ok: ycsb-ref --engine $engine runs bpbench ycsb's stream"
