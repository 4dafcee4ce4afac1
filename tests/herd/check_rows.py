#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_rows.py [--ops N] [--hold sleep|compute|none] [--compute-ns NS]
                 [--variants A,B,...] -- COMMAND [ARGS...]

Runs COMMAND (fwait-herd ... --json) and checks what its rows say, not only
that they parse (tests/json_lines.sh does that):

  * each row's fields are exactly the fields fwait-herd has always written,
    in their order, followed by the ones issue 11 appended, in theirs;
  * the header names the hold regime (--hold) and compute_ns;
  * the rows are the variants asked for (--variants), in that order;
  * with --ops, every variant made exactly that many acquisitions;
  * the wait quantiles are ordered (p50 <= p99 <= max) and the mean is at
    most the max; acquisitions per thread: min <= mean <= max, mean x
    threads_run = acquisitions, fairness_min_mean = min / mean;
  * a compute hold of NS ns holds at least NS ns each time (the spin ends
    only once NS ns have passed), so hold_us_mean >= NS / 1000; no hold
    holds 0;
  * spurious is null for the mutex variant (uncountable) and a count for
    every other one.

Exits 1 naming the first failed check.  No performance is asserted.
"""
import json
import subprocess
import sys

EXISTING = ["type", "policy", "acquisitions", "wall_s", "acq_per_s", "hold_us_mean",
            "user_s", "sys_s", "cpu_s_per_1k", "user_s_per_1k", "sys_s_per_1k", "vcsw",
            "ivcsw", "vcsw_per_acq", "spurious", "waits", "wakeups", "handoffs",
            "foreign_skipped", "max_bucket_depth", "sync_bytes", "percond_bytes",
            "projected_1m_bytes"]
APPENDED = ["ivcsw_per_acq", "cpu_us_per_acq", "wait_p50_ns", "wait_p99_ns", "wait_max_ns",
            "wait_mean_ns", "threads_run", "acq_per_thread_min", "acq_per_thread_mean",
            "acq_per_thread_max", "fairness_min_mean"]


def fail(msg):
    sys.exit("check_rows: " + msg)


def main(argv):
    opts = {"ops": None, "hold": None, "compute_ns": 0, "variants": None}
    i = 1
    while i < len(argv) and argv[i] != "--":
        key, val = argv[i], argv[i + 1] if i + 1 < len(argv) else None
        if val is None:
            fail("%s wants a value" % key)
        if key == "--ops":
            opts["ops"] = int(val)
        elif key == "--hold":
            opts["hold"] = val
        elif key == "--compute-ns":
            opts["compute_ns"] = int(val)
        elif key == "--variants":
            opts["variants"] = val.split(",")
        else:
            fail("unknown option " + key)
        i += 2
    cmd = argv[i + 1:]
    if not cmd:
        fail("no command")
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True).stdout
    lines = [json.loads(l) for l in out.splitlines()]
    headers = [l for l in lines if l.get("type") == "header"]
    rows = [l for l in lines if l.get("type") == "row"]
    if len(headers) != 1:
        fail("want one header line, got %d" % len(headers))
    h = headers[0]
    if opts["hold"] is not None and h.get("hold") != opts["hold"]:
        fail("header hold %r, want %r" % (h.get("hold"), opts["hold"]))
    if h.get("compute_ns") != opts["compute_ns"]:
        fail("header compute_ns %r, want %r" % (h.get("compute_ns"), opts["compute_ns"]))
    if not rows:
        fail("no rows")
    names = [r["policy"] for r in rows]
    if opts["variants"] is not None and names != opts["variants"]:
        fail("rows %s, want %s" % (names, opts["variants"]))
    for r in rows:
        p = r["policy"]
        if list(r.keys()) != EXISTING + APPENDED:
            fail("%s: fields %s,\n  want %s" % (p, list(r.keys()), EXISTING + APPENDED))
        a = r["acquisitions"]
        if opts["ops"] is not None and a != opts["ops"]:
            fail("%s: %d acquisitions, want %d" % (p, a, opts["ops"]))
        if a <= 0:
            fail("%s: no acquisitions" % p)
        if not r["wait_p50_ns"] <= r["wait_p99_ns"] <= r["wait_max_ns"]:
            fail("%s: wait p50 %d, p99 %d, max %d out of order"
                 % (p, r["wait_p50_ns"], r["wait_p99_ns"], r["wait_max_ns"]))
        if r["wait_mean_ns"] > r["wait_max_ns"] + 0.05:
            fail("%s: wait mean %s above max %s" % (p, r["wait_mean_ns"], r["wait_max_ns"]))
        t = r["threads_run"]
        if t != h["threads"]:
            fail("%s: %d threads ran, want %d" % (p, t, h["threads"]))
        mn, mean, mx = r["acq_per_thread_min"], r["acq_per_thread_mean"], r["acq_per_thread_max"]
        if not (mn <= mean + 0.05 and mean <= mx + 0.05):
            fail("%s: per thread min %s, mean %s, max %s out of order" % (p, mn, mean, mx))
        if abs(mean * t - a) > 0.05 * t + 1e-9:
            fail("%s: mean %s x %d threads != %d acquisitions" % (p, mean, t, a))
        if abs(r["fairness_min_mean"] - mn / (a / t)) > 1e-4:
            fail("%s: fairness %s, want min/mean = %s" % (p, r["fairness_min_mean"], mn / (a / t)))
        hold = r["hold_us_mean"]
        if opts["compute_ns"] and hold < opts["compute_ns"] / 1000.0:
            fail("%s: mean hold %s us, below the %d ns spin" % (p, hold, opts["compute_ns"]))
        if opts["hold"] == "none" and hold != 0:
            fail("%s: mean hold %s us with no hold" % (p, hold))
        if (r["spurious"] is None) != (p == "mutex"):
            fail("%s: spurious %r (null only for mutex)" % (p, r["spurious"]))
    print("check_rows: %d rows checked" % len(rows))


if __name__ == "__main__":
    main(sys.argv)
