#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# prelink.sh OBJCOPY OUTPUT.o ARCHIVE.a CC... - run by the build
# (meson.build), not by hand.
#
# Links every object of ARCHIVE into one relocatable object OUTPUT (with the
# C compiler driver CC and -r), then makes its hidden symbols local
# (objcopy --localize-hidden).  The libraries' internal functions are
# compiled with hidden visibility, so afterwards only the public API (what
# the headers declare under `#pragma GCC visibility push(default)`) is
# global in OUTPUT and in the static archive built from it.
set -euo pipefail
objcopy=$1 out=$2 archive=$3
shift 3
"$@" -r -nostdlib -o "$out" -Wl,--whole-archive "$archive" -Wl,--no-whole-archive
"$objcopy" --localize-hidden "$out"
