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
#
# One hidden symbol must stay global: the USDT probes' _.stapsdt.base
# (<sys/sdt.h>: weak and hidden, in a COMDAT section that every object
# with probes carries).  A static link of both archives keeps one copy of
# that section and discards the other; the discarded library's probe notes
# then resolve to the kept copy only if the symbol is global (made local,
# the link fails: "referenced in section .note.stapsdt ... defined in
# discarded section").  Hidden, it is exported from no shared library.
set -euo pipefail
objcopy=$1 out=$2 archive=$3
shift 3
"$@" -r -nostdlib -o "$out" -Wl,--whole-archive "$archive" -Wl,--no-whole-archive
"$objcopy" --localize-hidden "$out"
"$objcopy" --globalize-symbol=_.stapsdt.base "$out"
"$objcopy" --weaken-symbol=_.stapsdt.base "$out"
