#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - set everything up on a fresh Debian machine and run the main job:
# a concurrent YCSB workload on the embedded B+-tree store over the buffer
# pool, with a live progress line, ending with the pool's contention stats.
# Extra arguments go to the workload driver.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh" build
exec "$here/build/tools/bpbench/bpbench" ycsb "$@"
