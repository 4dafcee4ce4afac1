#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tool_version.sh PROG VERSION COMMAND... - `COMMAND --version` exits 0 and
# prints exactly "PROG (fwait-bufpool) VERSION" (the project's version,
# meson.project_version(), given by the test's meson.build), nothing else.
# Used by the tools' tests (tests/<tool>/), one per installed tool.
set -euo pipefail
prog=$1 version=$2; shift 2
want="$prog (fwait-bufpool) $version"
got=$("$@" --version) || { echo "$* --version exited $?" >&2; exit 1; }
if [ "$got" != "$want" ]; then
  printf '%s --version printed:\n%s\nwanted:\n%s\n' "$*" "$got" "$want" >&2
  exit 1
fi
echo "$got"
