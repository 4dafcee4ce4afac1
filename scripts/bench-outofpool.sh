#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-outofpool.sh [options] - issue 33's out-of-pool cells in one run:
# the store on bufpool (bpbench ycsb) against WiredTiger (and any other
# engine ycsb-ref has: rocksdb, leveldb, lmdb) on the same YCSB stream
# (ycsb-ref links bpbench's ycsb_common: same keys, values, mix, threads,
# seed), and bufpool's read paths against each other as engines of their
# own (issue 33 item 4, "on each read path in the same run"):
#   bufpool          bpbench ycsb --read-path auto (a miss is read by the
#                    thread that missed, pread)
#   bufpool-cached   --read-path cached (by the thread that missed if the
#                    kernel has it cached, else by the engine)
#   bufpool-threads  --read-path engine --io-engine threads
#   bufpool-uring    --read-path engine --io-engine uring
# YCSB A, B and C at 2 and 16 threads, 200000 records (about 32 MB), the
# cache an eighth of the data (bpbench --frames 1024 x 4096 B; the others
# --cache-bytes 4194304), ROUNDS rounds alternating the engines within each
# cell (bufpool, wiredtiger, [others], then again), each run DURATION s.
# After each cell, a table: per engine the median ops/s, the min-max
# spread, the median CPU us per op (user + sys, getrusage over the run
# phase, whole process) and its user and sys medians; then bufpool /
# wiredtiger for both, and whether bufpool matches WiredTiger there (ops/s
# at least, CPU per op at most: the issue's "done when"), for each bufpool
# engine run; under each bufpool engine's row its misses per op, the mean
# wait per miss (miss_wait_us: inline read time + io_wait, over misses) and
# the share of reads done inline, each round's (the spread can be
# bimodal), and the I/O engine it ran.  --direct: the bufpool engines
# open the store O_DIRECT (bpbench --direct: every miss goes to the
# device); WiredTiger has no equivalent, so the default engines are then
# "bufpool bufpool-threads bufpool-uring".  Every run's
# JSON lines are kept in OUT (default a new /tmp/bench-outofpool.XXXXXX,
# kept: its path is printed) as <workload><threads>-<engine>-<round>.json.
#
# The engines other than bufpool* need build/tools/compare/ycsb-ref: bash
# scripts/setup-compare.sh.
# Options (or the environment variable in brackets):
#   --build DIR         the build (BUILD, default build)
#   -w, --workloads L   workloads (WORKLOADS, default "A B C")
#   -t, --threads L     thread counts (THREADS, default "2 16")
#   -r, --records N     (RECORDS, default 200000)
#   -d, --duration S    seconds per run (DURATION, default 10)
#   --rounds N          (ROUNDS, default 3)
#   --engines L         (ENGINES, default "bufpool wiredtiger", with
#                       --direct "bufpool bufpool-threads bufpool-uring"; bufpool*
#                       are bpbench ycsb, the others ycsb-ref --engine)
#   --direct            the bufpool engines with --direct (DIRECT=1)
#   --frames N          bpbench's pool (FRAMES, default 1024)
#   --cache-bytes B     the others' cache (CACHE_BYTES, default 4194304)
#   --out DIR           (OUT)
#   --tables-only       run nothing: print the tables of the runs in --out
# BPBENCH_ARGS is passed to every bufpool engine's bpbench ycsb run as is,
# after its read-path options (e.g. BPBENCH_ARGS="--latency-us 50"),
# REF_ARGS to every ycsb-ref run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build} workloads=${WORKLOADS:-A B C} threads=${THREADS:-2 16}
records=${RECORDS:-200000} duration=${DURATION:-10} rounds=${ROUNDS:-3}
engines=${ENGINES:-} frames=${FRAMES:-1024} direct=${DIRECT:-}
cache=${CACHE_BYTES:-4194304} out=${OUT:-} tables_only=
while [ $# -gt 0 ]; do
  case $1 in
    --tables-only) tables_only=1; shift; continue ;;
    --direct) direct=1; shift; continue ;;
    --build) build=$2 ;;
    -w|--workloads) workloads=$2 ;;
    -t|--threads) threads=$2 ;;
    -r|--records) records=$2 ;;
    -d|--duration) duration=$2 ;;
    --rounds) rounds=$2 ;;
    --engines) engines=$2 ;;
    --frames) frames=$2 ;;
    --cache-bytes) cache=$2 ;;
    --out) out=$2 ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-outofpool.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  [ $# -ge 2 ] || { echo "bench-outofpool.sh: $1 wants a value" >&2; exit 2; }
  shift 2
done
[ "$direct" != 0 ] || direct=
if [ -z "$engines" ]; then
  if [ -n "$direct" ]; then engines="bufpool bufpool-threads bufpool-uring"; else engines="bufpool wiredtiger"; fi
fi
case $build in /*) ;; *) build=$here/$build ;; esac
bb=$build/tools/bpbench/bpbench ref=$build/tools/compare/ycsb-ref

# A bufpool engine's bpbench ycsb options (its read path); nothing and
# status 1 for another engine (ycsb-ref's).
bufpool_args() { # ENGINE
  case $1 in
    bufpool) echo "--read-path auto" ;;
    bufpool-cached) echo "--read-path cached" ;;
    bufpool-threads) echo "--read-path engine --io-engine threads" ;;
    bufpool-uring) echo "--read-path engine --io-engine uring" ;;
    *) return 1 ;;
  esac
}
for e in $engines; do
  case $e in
    bufpool-*) bufpool_args "$e" > /dev/null \
      || { echo "bench-outofpool.sh: no bufpool engine $e (bufpool, bufpool-cached," \
                "bufpool-threads, bufpool-uring)" >&2; exit 2; } ;;
  esac
  [ -n "$tables_only" ] && continue
  if bufpool_args "$e" > /dev/null; then
    [ -x "$bb" ] || { echo "bench-outofpool.sh: no $bb (bash scripts/setup.sh)" >&2; exit 1; }
  elif [ ! -x "$ref" ]; then
    echo "bench-outofpool.sh: no $ref for $e (bash scripts/setup-compare.sh)" >&2
    exit 1
  fi
done
if [ -n "$tables_only" ] && [ ! -d "$out" ]; then
  echo "bench-outofpool.sh: --tables-only needs --out DIR of an earlier run" >&2
  exit 2
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/bench-outofpool.XXXXXX)
mkdir -p "$out"
read -r -a bpargs <<< "${BPBENCH_ARGS:-}"
read -r -a refargs <<< "${REF_ARGS:-}"
echo "bench-outofpool: workloads $workloads, threads $threads, $records records, ${duration} s" \
     "a run, $rounds rounds of: $engines; bufpool --frames $frames${direct:+ --direct}${BPBENCH_ARGS:+ $BPBENCH_ARGS}," \
     "others --cache-bytes $cache${REF_ARGS:+ $REF_ARGS}; JSON in $out"

# One run's JSON lines into FILE; a failed run leaves FILE.err and no FILE.
run_one() { # ENGINE WORKLOAD THREADS FILE
  local cmd pathargs
  if pathargs=$(bufpool_args "$1"); then
    read -r -a pathargs <<< "$pathargs${direct:+ --direct}"
    # env -u: an inherited BP_READ_PATH=engine (tests/meson.build's threads
    # setup) would turn --read-path auto into engine, and bufpool into
    # bufpool-threads or -uring under its own name
    cmd=(env -u BP_READ_PATH "$bb" ycsb --json -q --no-stats-file -w "$2" -t "$3"
         -r "$records" -d "$duration" --frames "$frames" "${pathargs[@]}" "${bpargs[@]}")
  else
    cmd=("$ref" --engine "$1" --json -q -w "$2" -t "$3" -r "$records" -d "$duration"
         --cache-bytes "$cache" "${refargs[@]}")
  fi
  if "${cmd[@]}" > "$4.tmp" 2> "$4.err"; then
    mv "$4.tmp" "$4"
    rm -f "$4.err"
  else
    rm -f "$4.tmp"
    echo "  $1 $2 -t $3 failed (exit status $?); its stderr: $4.err" >&2
    tail -5 "$4.err" >&2
  fi
}

# The table of one cell from its files.
cell_table() { # WORKLOAD THREADS
  python3 - "$out" "$1" "$2" "$rounds" $engines <<'PY'
import json, os, statistics, sys
out, w, t, rounds, engines = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
def result(path):
    """The result line (bpbench's has the misses' keys, ycsb-ref's not)."""
    lines = [json.loads(l) for l in open(path)]
    return next((d for d in lines if d.get("type") == "result"), None)
def inline_share(d):
    reads = d["inline_reads"] + d["engine_reads"]
    return "%3.0f%%" % (100.0 * d["inline_reads"] / reads) if reads else "   -"
miss_keys = ("misses_per_op", "miss_wait_us", "inline_reads", "engine_reads", "io_engine")
rows, med = [], {}
for e in engines:
    rs = []
    for r in range(1, rounds + 1):
        p = os.path.join(out, "%s%s-%s-%d.json" % (w, t, e, r))
        d = result(p) if os.path.exists(p) else None
        if d:
            rs.append(d)
    if not rs:
        rows.append("  %-15s %s" % (e, "no run finished"))
        continue
    ops = [d["ops_per_s"] for d in rs]
    usr = [d["cpu_user_us_per_op"] for d in rs]
    sys_ = [d["cpu_sys_us_per_op"] for d in rs]
    cpu = [u + s for u, s in zip(usr, sys_)]
    med[e] = (statistics.median(ops), statistics.median(cpu))
    rows.append("  %-15s %4d %12.0f %10.0f-%-10.0f %10.2f %8.2f %8.2f" % (
        e, len(rs), med[e][0], min(ops), max(ops), med[e][1], statistics.median(usr),
        statistics.median(sys_)))
    if all(k in d for d in rs for k in miss_keys):  # bpbench: the pool's misses, each run
        rows.append("  %-15s misses/op %s; wait us/miss %s; inline %s (by round; %s)" % (
            "", " ".join("%.3f" % d["misses_per_op"] for d in rs),
            " ".join("%.1f" % d["miss_wait_us"] for d in rs),
            " ".join(inline_share(d) for d in rs),
            "/".join(sorted(set(d["io_engine"] for d in rs)))))
print("YCSB-%s, %s threads (medians of %d rounds)" % (w, t, rounds))
print("  %-15s %4s %12s %21s %10s %8s %8s" % ("engine", "runs", "ops/s", "min-max ops/s",
                                              "cpu us/op", "user", "sys"))
print("\n".join(rows))
for e in engines:
    if not (e == "bufpool" or e.startswith("bufpool-")) or e not in med or "wiredtiger" not in med:
        continue
    b, wt = med[e], med["wiredtiger"]
    ok = b[0] >= wt[0] and b[1] <= wt[1]
    print("  %s/wiredtiger: %.2fx ops/s, %.2fx cpu per op: %s" % (
        e, b[0] / wt[0], b[1] / wt[1] if wt[1] else float("nan"),
        "matches (ops/s >=, cpu/op <=)" if ok else "does NOT match"))
PY
}

for w in $workloads; do
  for t in $threads; do
    for r in $(seq 1 "$rounds"); do
      for e in $engines; do
        [ -n "$tables_only" ] || run_one "$e" "$w" "$t" "$out/$w$t-$e-$r.json"
      done
    done
    cell_table "$w" "$t"
  done
done
