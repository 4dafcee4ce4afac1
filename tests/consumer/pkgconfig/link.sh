#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/consumer/pkgconfig/link.sh RECIPE OUTDIR - build
# tests/consumer/consumer.c (it includes <fwait/fwait.h> and
# <bufpool/bufpool.h> and calls both libraries) with one of the pkg-config
# recipes README.md gives ("Installing, and pkg-config"), using nothing but
# what pkg-config prints for bufpool from the caller's PKG_CONFIG_PATH (a
# build tree's meson-uninstalled/, or an install's lib/pkgconfig/); check
# which libraries the program needs at run time; run it.
#
#   shared    cc app.c $(pkg-config --cflags --libs bufpool)
#             NEEDED must list libbufpool.so and libfwait.so; the program
#             runs with LD_LIBRARY_PATH set to the -L folders pkg-config
#             printed (a build tree's libraries have no run path).
#   archives  cc app.c $(pkg-config --cflags bufpool) \
#                 -Wl,-Bstatic $(pkg-config --libs bufpool) -Wl,-Bdynamic \
#                 -Wl,--as-needed $(pkg-config --static --libs bufpool)
#             libbufpool.a and libfwait.a linked in, the rest (libc,
#             jemalloc, liburing) shared: NEEDED must not list libbufpool
#             or libfwait, and bp_open and fwait_table_create must be
#             defined in the program itself.
#   static    cc -static app.c $(pkg-config --static --cflags --libs bufpool)
#             fully static: no NEEDED at all.
#
# OUTDIR receives the program (consumer-RECIPE).  CC (default cc) is the
# compiler, word-split (a ccache wrapper may come first).  Exit 0: built,
# checked and ran; 1: a check failed; 99: a setup error (no pkg-config
# bufpool on PKG_CONFIG_PATH, unknown recipe).
set -euo pipefail
recipe=${1:?usage: link.sh shared|archives|static OUTDIR}
out=${2:?usage: link.sh shared|archives|static OUTDIR}
src=$(cd "$(dirname "$0")/.." && pwd)/consumer.c
read -r -a cc <<<"${CC:-cc}"
fail() { echo "link.sh $recipe: FAIL: $*" >&2; exit 1; }

pkg-config --exists bufpool ||
	{ echo "link.sh: no bufpool.pc on PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-}" >&2; exit 99; }
# Which file pkg-config read (bufpool-uninstalled.pc wins over bufpool.pc
# in the same folder), so that a log shows whether the build tree was used.
echo "bufpool: $(pkg-config --path bufpool 2>/dev/null || echo "(pkg-config has no --path)")"

read -r -a cflags <<<"$(pkg-config --cflags bufpool)"
read -r -a libs <<<"$(pkg-config --libs bufpool)"
read -r -a static_libs <<<"$(pkg-config --static --libs bufpool)"
mkdir -p "$out"
exe=$out/consumer-$recipe
warn=(-std=c11 -Wall -Wextra -Werror)
case $recipe in
shared)   link=("${cc[@]}" "${warn[@]}" "${cflags[@]}" "$src" -o "$exe" "${libs[@]}") ;;
archives) link=("${cc[@]}" "${warn[@]}" "${cflags[@]}" "$src" -o "$exe"
		-Wl,-Bstatic "${libs[@]}" -Wl,-Bdynamic -Wl,--as-needed "${static_libs[@]}") ;;
static)   link=("${cc[@]}" -static "${warn[@]}" "${cflags[@]}" "$src" -o "$exe" "${static_libs[@]}") ;;
*)        echo "link.sh: unknown recipe '$recipe'" >&2; exit 99 ;;
esac
echo "${link[*]}"
"${link[@]}" || fail "compiling and linking with pkg-config's flags failed"

needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "NEEDED: ${needed:-(none)}"
run_env=()
case $recipe in
shared)
	grep -q 'libbufpool\.so' <<<"$needed" || fail "the program does not need libbufpool.so"
	grep -q 'libfwait\.so' <<<"$needed" || fail "the program does not need libfwait.so"
	dirs=$(pkg-config --libs-only-L bufpool | sed 's/-L//g; s/^ *//; s/ *$//; s/  */:/g')
	# (no -L at all where pkg-config left out a system folder: the
	# caller's LD_LIBRARY_PATH as it is, never an empty entry)
	run_env=(env "LD_LIBRARY_PATH=$dirs${LD_LIBRARY_PATH:+${dirs:+:}$LD_LIBRARY_PATH}") ;;
archives)
	if grep -Eq 'lib(bufpool|fwait)\.so' <<<"$needed"; then
		fail "the program needs a shared libbufpool or libfwait: the archives were not picked"
	fi
	syms=$(nm --defined-only "$exe")
	for s in bp_open fwait_table_create; do
		grep -Eq " T $s\$" <<<"$syms" || fail "$s is not defined in the program"
	done ;;
static)
	[ -z "$needed" ] || fail "the program is not fully static" ;;
esac
"${run_env[@]}" "$exe" || fail "the program failed"
