#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tool_sigint.sh [--tmpdir DIR] [--then REGEX] PATTERN COMMAND... - a tool
# that runs a load stops on
# Ctrl-C and exits 130 (128 + SIGINT), as a shell reports a process SIGINT
# killed.  Starts COMMAND (its stdout and stderr on one pipe), reads its
# output line by line until a line matches the extended regular expression
# PATTERN (the tool says its run is under way: no sleep stands in for
# that), sends it SIGINT, drains the rest of its output and checks the exit
# status.  The command must run far longer than the test's timeout unless
# interrupted (a long -d), so that only the signal can end it in time.
# --tmpdir DIR: DIR is made empty and the command runs with TMPDIR=DIR;
# afterwards DIR must be empty again (the tool removed its temporary files).
# --then REGEX: a line of the output after the signal must match REGEX (the
# tool reported; a tool the signal killed prints nothing more).
set -uo pipefail
tmpdir= then=
while :; do
  case $1 in
    --tmpdir) tmpdir=$2; shift 2
      rm -rf "$tmpdir" && mkdir -p "$tmpdir" || exit 1
      export TMPDIR=$tmpdir ;;
    --then) then=$2; shift 2 ;;
    *) break ;;
  esac
done
pattern=$1; shift
coproc TOOL { exec "$@" 2>&1; }
pid=$TOOL_PID
seen=0
while IFS= read -r line <&"${TOOL[0]}"; do
  printf '%s\n' "$line"
  if [[ $line =~ $pattern ]]; then
    seen=1
    break
  fi
done
if [ $seen = 0 ]; then
  wait "$pid"
  echo "tool_sigint: the tool ended (status $?) before printing /$pattern/" >&2
  exit 1
fi
# Non-interactive bash starts background jobs with SIGINT ignored; the
# tool's own handler (toolutil.h, tool_catch_stop) replaces that.
kill -INT "$pid"
rest=$(cat <&"${TOOL[0]}")
wait "$pid"
status=$?
printf '%s\n' "$rest"
if [ -n "$then" ] && ! grep -Eq -- "$then" <<<"$rest"; then
  echo "tool_sigint: nothing after the signal matches /$then/" >&2
  exit 1
fi
echo "tool_sigint: exit status $status"
[ "$status" = 130 ] || exit 1
if [ -n "$tmpdir" ] && [ -n "$(ls -A "$tmpdir")" ]; then
  echo "tool_sigint: left in $tmpdir:" $(ls -A "$tmpdir") >&2
  exit 1
fi
