#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_spdx.sh SRCDIR [FILE...] - every source file the project owns (git
# ls-files in SRCDIR: .c .h .hpp .cpp .pml .sh .py .gp and meson.build), and
# each FILE named, has "SPDX-License-Identifier: MIT" on its first line, or
# on its second after a shebang.  Exit 0: all have it; 1: the files without
# it, listed; 77 (skipped): SRCDIR is no git checkout (a tarball).
set -euo pipefail
src=${1:?usage: check_spdx.sh SRCDIR [FILE...]}
shift
cd "$src"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "check_spdx: no git checkout: skipped"; exit 77; }
missing=0
while IFS= read -r f; do
	[ -f "$f" ] || continue
	lines=$(head -n 2 "$f")
	first=${lines%%$'\n'*}
	case $first in
	'#!'*) want=${lines#*$'\n'} ;;
	*) want=$first ;;
	esac
	case $want in
	*'SPDX-License-Identifier: MIT'*) ;;
	*) echo "check_spdx: no SPDX-License-Identifier: MIT line: $f"; missing=$((missing + 1)) ;;
	esac
done < <(git ls-files | grep -E '\.(c|h|hpp|cpp|pml|sh|py|gp)$|(^|/)meson\.build$'; printf '%s\n' "$@")
[ "$missing" -eq 0 ] || exit 1
echo "check_spdx: every source file has its SPDX line"
