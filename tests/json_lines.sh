#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# json_lines.sh [--want TYPE]... -- COMMAND [ARGS...]
#
# Runs COMMAND and checks that everything it writes on stdout is JSON
# lines: at least one line, each line one JSON object (parsed by Python's
# json module: python3 is always there, Meson runs on it).  With --want,
# some line must have "type" equal to TYPE (each --want checked).  Fails
# naming the first bad line.  Used by the tools' tests (tests/<tool>/) to
# show that each tool's --json output parses.
set -euo pipefail
want=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --want) want+=("$2"); shift 2 ;;
    *) echo "json_lines.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "json_lines.sh: no command" >&2; exit 2; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" > "$out"
python3 - "$out" "${want[@]}" <<'PY'
import json, sys
path, want = sys.argv[1], set(sys.argv[2:])
lines = open(path, encoding="utf-8").read().splitlines()
if not lines:
    sys.exit("json_lines: no output")
types = set()
for n, line in enumerate(lines, 1):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("json_lines: line %d is not JSON (%s): %s" % (n, e, line[:300]))
    if not isinstance(obj, dict):
        sys.exit("json_lines: line %d is not an object: %s" % (n, line[:300]))
    types.add(obj.get("type"))
missing = sorted(want - types)
if missing:
    sys.exit("json_lines: no line of type %s (saw %s)" % (missing, sorted(map(str, types))))
print("json_lines: %d lines parse" % len(lines))
PY
