#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench-io-engines.sh [BUILDDIR] - the I/O engine figure of docs/benchmarks.md:
# bpbench tiotest's random reads, O_DIRECT, 64 threads, a pool one eighth of
# the data, the thread pool and io_uring alternating, REPS (3) times each;
# every miss read by the engine (--read-path engine: by default the thread
# that missed reads it, and the engines would read only the readahead).
# Prints each run's Random Read rows (table, then MB/cpusec).  Environment:
# MB (4, per thread), OPS (2048 random reads per thread), FRAMES (8192),
# REPS (3), FILE (data file, default /tmp/bench-io-engines.data: needs a
# file system with O_DIRECT).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bb=${1:-$here/build}/tools/bpbench/bpbench
file=${FILE:-/tmp/bench-io-engines.data}
trap 'rm -f "$file"' EXIT
args=(-t 64 --mb "${MB:-4}" --random-ops "${OPS:-2048}" --frames "${FRAMES:-8192}"
      --latency-us 0 --direct --read-path engine --policies futex --file "$file")
for rep in $(seq 1 "${REPS:-3}"); do
  for eng in threads uring; do
    out=$("$bb" tiotest "${args[@]}" --io-engine "$eng" 2>/dev/null)
    echo "rep $rep engine $eng: $(grep -E '^\| Random Read +[0-9]' <<<"$out" | tr -s ' ')"
    echo "   $(grep -E '^\| futex +\| Random Read' <<<"$out" | tr -s ' ')"
  done
done
