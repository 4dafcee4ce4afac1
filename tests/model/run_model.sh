#!/bin/sh
# SPDX-License-Identifier: MIT
# run_model.sh - generate, compile and run spin's verifier for fwait.pml.
#
# Usage: run_model.sh [--expect pass|fail] [--ltl] [--cc CC] MODEL.pml [-DNAME[=V] ...]
#
#   --expect pass  (default) succeed iff pan reports "errors: 0" after a
#                  complete search (no "search depth too small" truncation).
#   --expect fail  succeed iff pan reports errors > 0 (a deliberately broken
#                  variant must be caught); the counterexample trail is
#                  replayed with spin -t and its tail printed.
#   --ltl          check the model's ltl claim (acceptance cycles, ./pan -a)
#                  instead of assertions + invalid end states (-DSAFETY).
#
# Everything happens in a fresh temporary directory, removed on exit.
# Exit status: 0 as expected, 1 not as expected, 77 spin/cc missing (skip).
set -u

expect=pass
ltl=0
cc=${CC:-cc}
while [ $# -gt 0 ]; do
	case "$1" in
	--expect) expect=$2; shift 2 ;;
	--ltl) ltl=1; shift ;;
	--cc) cc=$2; shift 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ]; then
	echo "usage: $0 [--expect pass|fail] [--ltl] [--cc CC] MODEL.pml [-DNAME ...]" >&2
	exit 2
fi
model=$1
shift
case "$expect" in pass|fail) ;; *) echo "--expect must be pass or fail" >&2; exit 2 ;; esac

command -v spin >/dev/null 2>&1 || { echo "spin not installed: skipping"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || { echo "$cc not found: skipping"; exit 77; }

[ -r "$model" ] || { echo "cannot read $model" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/fwait-model.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$model" "$dir/model.pml" || exit 1
cd "$dir" || exit 1

echo "model: $model $*  (expect $expect, $( [ $ltl = 1 ] && echo ltl || echo safety))"
if ! spin -a "$@" model.pml >spin.out 2>&1; then
	cat spin.out
	echo "FAIL: spin -a could not generate the verifier"
	exit 1
fi

# -DSAFETY: assertions and invalid end states only, no cycle detection.
# -DNOCLAIM: ignore the ltl claim in a safety run.
# -DVECTORSZ: room for the state vector; -w: spin's generated C is noisy.
if [ $ltl = 1 ]; then
	cflags="-O1 -w"
	runflags="-a -m20000"
else
	cflags="-O1 -w -DSAFETY -DNOCLAIM"
	runflags="-m20000"
fi
if ! $cc $cflags -o pan pan.c >cc.out 2>&1; then
	cat cc.out
	echo "FAIL: could not compile pan.c"
	exit 1
fi

start=$(date +%s)
./pan $runflags -w24 >pan.out 2>&1
end=$(date +%s)
grep -E "State-vector|states, stored|errors:|elapsed|total actual memory|depth too small|pan:.*(assertion|invalid end|acceptance)" pan.out
echo "wall: $((end - start)) s"

errors=$(sed -n 's/.*errors: *\([0-9][0-9]*\).*/\1/p' pan.out | head -n 1)
if [ -z "$errors" ]; then
	tail -n 30 pan.out
	echo "FAIL: no 'errors: N' line in pan's output"
	exit 1
fi

if [ "$expect" = pass ]; then
	if grep -q "depth too small" pan.out; then
		echo "FAIL: search truncated (max search depth too small)"
		exit 1
	fi
	if [ "$errors" -ne 0 ]; then
		echo "--- counterexample (spin -t, last 60 lines) ---"
		spin -t -p -g "$@" model.pml 2>&1 | tail -n 60
		echo "FAIL: $errors error(s) found"
		exit 1
	fi
	echo "PASS: no errors"
	exit 0
fi

if [ "$errors" -eq 0 ]; then
	echo "FAIL: the broken variant was NOT caught"
	exit 1
fi
echo "--- counterexample (spin -t, last 25 lines) ---"
spin -t -p "$@" model.pml 2>&1 | grep -E "^ *[0-9]+:|end state|never claim" | tail -n 25
echo "PASS: the broken variant was caught ($errors error(s))"
exit 0
