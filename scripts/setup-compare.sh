#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup-compare.sh [BUILDDIR] [meson options...]
#
# The comparison build of issue 33: installs the Debian packages of the
# engines tools/compare drives (WiredTiger 3.2.1, RocksDB 7.8, LevelDB 1.23,
# LMDB 0.9.24 on bookworm) through scripts/setup.sh's own install logic
# (SETUP_EXTRA_PKGS), then configures and builds BUILDDIR (default build)
# with -Dcompare=enabled, so build/tools/compare/ycsb-ref is there (or the
# configure fails saying which library is missing).  CI does not run this:
# the default build (compare=auto) needs none of them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
builddir=${1:-build}; shift || true
SETUP_EXTRA_PKGS="libwiredtiger-dev librocksdb-dev libleveldb-dev liblmdb-dev ${SETUP_EXTRA_PKGS:-}" \
  exec bash "$here/setup.sh" "$builddir" -Dcompare=enabled "$@"
