#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test.sh - set everything up on a fresh Debian machine and run every test
# suite (headers, cxx, fwait, bufpool, stress, model, tools, fuzz, probes,
# ...) in the normal build.  Installs what the tests need (setup.sh's test
# set).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SETUP_SET=test bash "$here/scripts/setup.sh" build
cd "$here"
exec meson test -C build --print-errorlogs --num-processes 2 "$@"
