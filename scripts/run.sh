#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - set everything up on a fresh Debian machine and run the main job:
# a concurrent YCSB workload on the embedded B+-tree store over the buffer
# pool, with a live progress line, ending with its summary.  Installs only
# what building bpbench needs (setup.sh's demo set), builds only bpbench,
# with the build's progress shown.  Extra arguments go to the workload
# driver (bpbench ycsb --help; --counters adds the pool's raw counters).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SETUP_SET=demo SETUP_TARGETS=bpbench bash "$here/scripts/setup.sh" build
exec "$here/build/tools/bpbench/bpbench" ycsb "$@"
