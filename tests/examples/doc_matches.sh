#!/bin/sh
# SPDX-License-Identifier: MIT
# doc_matches.sh DOC NAME FILE - fail unless the fenced code block of DOC
# between the lines "<!-- begin NAME -->" and "<!-- end NAME -->" is FILE,
# byte for byte, so the example a reader copies is the one that is built
# and run (tools/examples/meson.build).  The fence lines (```) are dropped.
set -eu
doc=$1 name=$2 file=$3
block=$(mktemp)
trap 'rm -f "$block"' EXIT
awk -v b="<!-- begin $name -->" -v e="<!-- end $name -->" '
	$0 == b { on = 1; seen = 1; next }
	$0 == e { on = 0; next }
	on && !/^```/ { print }
	END { exit seen ? 0 : 1 }' "$doc" >"$block" || {
	echo "doc_matches: no line '<!-- begin $name -->' in $doc" >&2
	exit 1
}
if ! diff -u --label "$file" --label "$doc ($name block)" "$file" "$block"; then
	echo "doc_matches: the $name block of $doc differs from $file (diff above); copy the file into it" >&2
	exit 1
fi
