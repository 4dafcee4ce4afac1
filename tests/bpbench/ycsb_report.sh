#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ycsb_report.sh BPBENCH - bpbench ycsb's human report ends on the run's
# summary, has the pool's raw counters only with --counters (before the
# summary), and its hit ratio is the one definition the counters' header
# names, (hits + optimistic_reads) / (hits + optimistic_reads + misses),
# computed here from the dumped counters.  A pool of 64 frames under 20000
# records misses often, so hits, optimistic reads and misses are all
# non-zero and the two definitions (with or without optimistic reads)
# differ.
set -euo pipefail
bpbench=$1
run() { "$bpbench" ycsb -r 20000 -o 50000 -t 2 --frames 64 -q --no-stats-file "$@"; }

plain=$(run)
counted=$(run --counters)

python3 - "$plain" "$counted" <<'PY'
import re, sys
plain, counted = (s.splitlines() for s in sys.argv[1:])

def fail(msg):
    sys.exit("ycsb_report: " + msg)

def summary_start(lines):
    idx = [i for i, l in enumerate(lines) if l.startswith("run:  ")]
    if len(idx) != 1:
        fail("want one 'run:' line, got %d" % len(idx))
    return idx[0]

# Without --counters: no dump at all; the summary is the end.
if any(l.startswith("pool statistics") or l.strip() == "counters:" for l in plain):
    fail("the raw counters are printed without --counters")
s = summary_start(plain)
if not plain[-1].startswith("  context switches per op"):
    fail("the report ends on %r, not the summary's last line" % plain[-1])

# With --counters: the dump, then the summary, which still ends the report.
s = summary_start(counted)
head = [i for i, l in enumerate(counted) if l.startswith("pool statistics")]
if len(head) != 1 or head[0] > s:
    fail("want the dump's header once, before the summary")
if "(hits + optimistic_reads) / (hits + optimistic_reads + misses)" not in \
        counted[head[0]] + counted[head[0] + 1]:
    fail("the dump's header does not name the hit ratio's definition")
if not counted[-1].startswith("  context switches per op"):
    fail("with --counters the report ends on %r" % counted[-1])

c = {}
section = None
for l in counted[head[0]:s]:
    m = re.match(r"^  (\w+):$", l)
    if m:
        section = m.group(1)
    m = re.match(r"^    (hits|misses|optimistic_reads)\s+(\d+)$", l)
    if m and section == "counters":
        c[m.group(1)] = int(m.group(2))
if set(c) != {"hits", "misses", "optimistic_reads"}:
    fail("counters hits, misses, optimistic_reads not all in the dump: %r" % c)
if not all(c.values()):
    fail("want every one of %r non-zero (a pool that misses)" % c)
printed = float(re.search(r"hit ratio ([0-9.]+)%", counted[s]).group(1))
resident = c["hits"] + c["optimistic_reads"]
want = 100.0 * resident / (resident + c["misses"])
if abs(printed - want) > 0.006:
    fail("summary hit ratio %.2f%%, the counters give %.4f%%" % (printed, want))
print("hit ratio %.2f%% = (%d + %d) / (%d + %d + %d)" % (
    printed, c["hits"], c["optimistic_reads"], c["hits"], c["optimistic_reads"], c["misses"]))
PY
