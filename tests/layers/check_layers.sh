#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_layers.sh - fail when a file of fwait or bufpool calls a file that is
# not below it.
#
# usage: check_layers.sh [-v] [--swap LIB/A.c LIB/B.c] BUILDDIR [SRCDIR]
#
# Each source file's head comment holds one paragraph
#     * Layer N (name): calls only a.c, b.c and c.c.
# (or "calls no other file of LIB"), which is the single place the layers
# are written down (the tables in LIB/internal.h repeat them for readers).
# The paragraph runs to the next empty comment line; every word ending in
# ".c" in it is a file this one may call, so it names no other .c file.
#
# The calls themselves come from the objects the build made: nm lists each
# object's defined (T, D, B, R...) and undefined (U) symbols; a file that
# leaves a symbol undefined which another file of the same library defines
# calls that file.  The check fails (exit 1), naming the edge and symbols,
# when a file
#   - calls a file of its own layer or of a higher one (so any loop, which
#     must climb back up somewhere, fails too);
#   - calls a file its Layer paragraph does not list;
#   - lists a file that is not below it.
# A listed file that is no longer called is only reported (-v).
#
# The objects: BUILDDIR/LIB/*.p/ holds one folder per library Meson built
# from those sources (the shared library's, a static one's, the prelinked
# core archive's, bufpool's test-only tiny-latch copy): the first one, in
# name order, that has an object for every LIB/*.c is used; all are built
# from the same sources.  Objects of files no longer in LIB/ (a stale
# clock.c.o after a rename) are ignored.
#
# --swap exchanges the layers of two files of one library before checking,
# to show that the check fails (tests/layers/meson.build runs it that way,
# as a should_fail test).  Exit: 0 pass, 1 a layer violation, 77 no nm
# (skipped), 99 anything else (usage, a missing Layer line, no objects):
# Meson counts 99 as an error even for a should_fail test, so only a real
# violation lets that one pass.
set -u
export LC_ALL=C

prog=check_layers
die() { echo "$prog: $*" >&2; exit 99; }

verbose=0
swap_a=
swap_b=
while [ $# -gt 0 ]; do
	case $1 in
	-v) verbose=1; shift ;;
	--swap)
		[ $# -ge 3 ] || die "--swap needs two files (LIB/A.c LIB/B.c)"
		swap_a=$2; swap_b=$3; shift 3 ;;
	-h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $prog [-v] [--swap LIB/A.c LIB/B.c] BUILDDIR [SRCDIR]"
builddir=$1
srcdir=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -d "$builddir" ] || die "no build directory $builddir"
NM=${NM:-nm}
if ! command -v "$NM" >/dev/null 2>&1; then
	echo "$prog: no $NM: skipped"
	exit 77
fi
if [ -n "$swap_a" ]; then
	[ "${swap_a%%/*}" = "${swap_b%%/*}" ] || die "--swap: $swap_a and $swap_b are not of one library"
fi

tmp=$(mktemp -d) || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# One library: its layer table (file layer listed...) into $tmp/table, then
# its symbols (D|U file symbol) into $tmp/syms, then the check.
check_lib() {
	local lib=$1 src base d objdir= ok
	: >"$tmp/table"
	: >"$tmp/syms"
	for src in "$srcdir/$lib"/*.c; do
		[ -f "$src" ] || die "$lib: no sources in $srcdir/$lib"
		base=${src##*/}
		awk -v f="$base" '
			NR == 1 && /SPDX-License-Identifier/ { spdx = 1; next }
			NR == 1 + spdx && !/^\/\*/ { exit }
			!par && /^ \* Layer [0-9]+/ { par = 1; layer = $3 + 0 }
			par && /^ \*[ \t]*$/ { exit }
			par { text = text " " $0 }
			/\*\// { exit }
			END {
				if (!par) { print f; exit }
				i = index(text, "calls")
				if (i)
					text = substr(text, i + 5)
				gsub(/[,;:()]/, " ", text)
				n = split(text, w, /[ \t]+/)
				out = f " " layer
				for (i = 1; i <= n; i++) {
					sub(/\.$/, "", w[i])
					if (w[i] ~ /^[A-Za-z0-9_-]+\.c$/)
						out = out " " w[i]
				}
				print out
			}' "$src" >>"$tmp/table"
	done
	# A file without a Layer line is an error, not a pass.
	awk 'NF < 2 { print $1 }' "$tmp/table" >"$tmp/missing"
	if [ -s "$tmp/missing" ]; then
		die "$lib: no \"Layer N (...): calls ...\" paragraph in the head comment of: $(tr '\n' ' ' <"$tmp/missing")"
	fi

	for d in "$builddir/$lib"/*.p; do
		[ -d "$d" ] || continue
		ok=1
		while read -r base _; do
			[ -f "$d/$base.o" ] || { ok=0; break; }
		done <"$tmp/table"
		if [ "$ok" = 1 ]; then objdir=$d; break; fi
	done
	[ -n "$objdir" ] || die "$lib: no folder $builddir/$lib/*.p with an object for every $lib/*.c (not built?)"

	while read -r base _; do
		"$NM" -P "$objdir/$base.o" >"$tmp/nm" 2>"$tmp/nm.err" ||
			die "$lib: $NM -P $objdir/$base.o failed: $(cat "$tmp/nm.err")"
		awk -v f="$base" '
			$2 == "U" { print "U", f, $1; next }
			$2 ~ /^[A-TV-Z]$/ { print "D", f, $1 }' "$tmp/nm" >>"$tmp/syms"
	done <"$tmp/table"

	awk -v lib="$lib" -v objdir="$objdir" -v verbose="$verbose" \
	    -v swap_a="$swap_a" -v swap_b="$swap_b" -v prog="$prog" '
		FILENAME == ARGV[1] {
			layer[$1] = $2
			nfiles++
			for (i = 3; i <= NF; i++)
				listed[$1, $i] = 1
			next
		}
		$1 == "D" { def[$3] = $2; next }
		$1 == "U" { nu++; uf[nu] = $2; us[nu] = $3; next }
		END {
			if (swap_a != "") {
				a = swap_a; b = swap_b
				if (a !~ "^" lib "/" || b !~ "^" lib "/") {
					# the other library: nothing swapped here
				} else {
					sub(/^[^\/]*\//, "", a); sub(/^[^\/]*\//, "", b)
					if (!(a in layer) || !(b in layer)) {
						printf "%s: --swap: no %s or %s in %s\n", prog, a, b, lib
						exit 99
					}
					t = layer[a]; layer[a] = layer[b]; layer[b] = t
					printf "%s: %s: --swap: %s is now layer %d, %s layer %d\n",
						prog, lib, a, layer[a], b, layer[b]
				}
			}
			for (i = 1; i <= nu; i++) {
				s = us[i]; from = uf[i]
				if (!(s in def) || def[s] == from)
					continue
				to = def[s]
				if (!((from, to) in edge)) {
					edge[from, to] = s
					ne++; ef[ne] = from; et[ne] = to
				} else {
					edge[from, to] = edge[from, to] " " s
				}
			}
			bad = 0
			for (i = 1; i <= ne; i++) {
				from = ef[i]; to = et[i]
				if (layer[to] >= layer[from]) {
					printf "%s: %s: %s (layer %d) calls %s (layer %d), which is not below it: %s\n",
						prog, lib, from, layer[from], to, layer[to], edge[from, to]
					bad++
				}
				if (!((from, to) in listed)) {
					printf "%s: %s: %s calls %s (%s), which its Layer paragraph does not list\n",
						prog, lib, from, to, edge[from, to]
					bad++
				}
			}
			for (k in listed) {
				split(k, p, SUBSEP)
				if (!(p[2] in layer)) {
					printf "%s: %s: %s lists %s, which is no file of %s\n", prog, lib, p[1], p[2], lib
					bad++
				} else if (layer[p[2]] >= layer[p[1]]) {
					printf "%s: %s: %s (layer %d) lists %s (layer %d), which is not below it\n",
						prog, lib, p[1], layer[p[1]], p[2], layer[p[2]]
					bad++
				} else if (verbose && !((p[1], p[2]) in edge)) {
					printf "%s: %s: note: %s lists %s but no longer calls it\n", prog, lib, p[1], p[2]
				}
			}
			if (verbose)
				for (i = 1; i <= ne; i++)
					printf "  %s: %s (%d) -> %s (%d): %s\n", lib, ef[i], layer[ef[i]],
						et[i], layer[et[i]], edge[ef[i], et[i]]
			printf "%s: %s: %d files, %d calls between files, %s (objects: %s)\n",
				prog, lib, nfiles, ne, bad ? bad " violation(s)" : "every one downward", objdir
			exit (bad ? 1 : 0)
		}' "$tmp/table" "$tmp/syms"
}

status=0
for lib in fwait bufpool; do
	check_lib "$lib"
	rc=$?
	[ "$rc" -eq 99 ] && exit 99
	[ "$rc" -ne 0 ] && status=1
done
exit $status
