#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_probes.sh on|off LIBRARY PROVIDER:NAME... - the USDT probes
# (util/probe.h) are in the built library: `readelf -n` lists, in its
# .note.stapsdt, a probe of each PROVIDER:NAME given.
#
# on|off: the build's probes (-Dprobes found <sys/sdt.h>); off skips (exit
# 77, Meson's skip), as does a machine without readelf.  Exit 1 names each
# probe missing; 99 (Meson's hard error, even for a should_fail test) when
# the library is not there or holds no probe at all, so that the
# should_fail test (a probe that does not exist) passes only by a real miss.
set -euo pipefail
state=$1 lib=$2; shift 2
if [ "$state" != on ]; then
  echo "probes off in this build (-Dprobes, <sys/sdt.h>): skipped"
  exit 77
fi
command -v readelf >/dev/null || { echo "no readelf: skipped"; exit 77; }
[ -f "$lib" ] || { echo "no library $lib" >&2; exit 99; }

# readelf -n prints each probe as "Provider: P" then "Name: N".
listed=$(readelf -n "$lib" | awk '$1 == "Provider:" { p = $2 } $1 == "Name:" { print p ":" $2 }' |
         sort -u)
[ -n "$listed" ] || { echo "$lib: no stapsdt note at all" >&2; exit 99; }
echo "$lib holds:" $listed
missing=0
for want in "$@"; do
  if ! grep -qxF "$want" <<< "$listed"; then
    echo "$lib: probe $want missing" >&2
    missing=1
  fi
done
exit $missing
