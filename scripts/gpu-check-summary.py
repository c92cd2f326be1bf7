#!/usr/bin/env python3
"""The short table scripts/gpu-check.sh prints last, from what its parts left in OUT.

Usage: scripts/gpu-check-summary.py OUT [TOLERANCE]
Exit status 1 when any check fails (named on the last line), 0 otherwise.

A winner's confirmed speedup is checked against the witness in its result.json: Nsight
Compute's speedup over the same launches the timer counts, measured in a process of its
own with caches left as the program leaves them (runner/evaluate/gpu/ncu.cc,
ncu_duration_argv), as in the timed runs. The ratio of the ncu profiles (the original's
at the baseline, the winner's at confirmation) is printed beside it, not checked: those
profile the first launches only, with caches flushed before each (ncu's default, which
the roofline metrics need), and on a kernel that moves more data than L2 holds that
ratio differs from any run's own (on an H200: transpose 3.52x flushed, 3.24x as run).
"""
import json
import os
import sys


def load(out, name):
    path = os.path.join(out, name, "result.json")
    return json.load(open(path)) if os.path.exists(path) else None


def interval(s):
    return "%.3fx [%.3f, %.3f]" % (s.get("median", 0), s.get("low", 0), s.get("high", 0))


def profile_ratio(result, winner):
    base = (result.get("gpu") or {}).get("baseline_ncu") or []
    win = (winner.get("gpu") or {}).get("ncu") or []
    if not base or not win:
        return ""
    ratio = sum(k["duration_ns"] for k in base) / sum(k["duration_ns"] for k in win)
    return "; profiles (flushed) %.3fx" % ratio


def search_rows(out, tolerance, rows, failures):
    for name in ("tune", "replay", "ops"):
        r = load(out, name)
        if r is None and not os.path.exists(os.path.join(out, name + ".log")):
            continue  # not run this time
        if r is None:
            failures.append(name + ": no result")
            continue
        n = r.get("noise") or {}
        s = n.get("speedup", {})
        rows.append((name + " A/A", interval(s), "significant" if n.get("significant") else "not significant", "", ""))
        if n.get("significant") or not (s.get("low", 2) <= 1.0 <= s.get("high", 0)):
            failures.append(name + " A/A")
        w = r.get("winner")
        if not w:
            failures.append(name + ": no winner")
            rows.append((name, "no winner", "", "", ""))
            continue
        sp = w["speedup"]
        roof = (w.get("confirmation") or {}).get("roofline") or {}
        roofline = "%.0f%% -> %.0f%%" % (roof.get("baseline_pct", 0), roof.get("candidate_pct", 0)) if roof else "n/a"
        witness = (w.get("witness") or {}).get("witness_speedup")
        if witness:
            diff = sp["median"] / witness - 1
            ratio = "ncu %.3fx (%+.1f%%)" % (witness, diff * 100)
            if abs(diff) > tolerance:
                failures.append("%s: %+.1f%% from ncu" % (name, diff * 100))
        else:
            ratio = "no witness"
            failures.append(name + ": no witness (ncu) figures")
        rows.append((name + " winner " + w["id"], interval(sp), "%d rounds" % sp["rounds"], roofline,
                     ratio + profile_ratio(r, w)))


def test_rows(out, rows, failures):
    for f in sorted(os.listdir(out)):
        if not f.endswith("_test.log"):
            continue
        text = open(os.path.join(out, f)).read()
        cheats = sum(1 for line in text.splitlines() if line.startswith(("cheat ", "fault ")))
        passed = "[  PASSED  ]" in text and "FAILED" not in text
        rows.append((f[:-4], "PASSED" if passed else "FAILED", "%d candidates" % cheats, "", ""))
        if not passed:
            failures.append(f)


def other_rows(out, rows, failures):
    events = os.path.join(out, "ops-events.txt")
    if os.path.exists(events):
        rows.append(("ops vs CUDA events", open(events).read().strip()[len("ops CUDA events: "):], "", "", ""))
    profile = os.path.join(out, "profile.log")
    if os.path.exists(profile):
        verdicts = [line for line in open(profile) if line.startswith(("OK:", "FAIL"))]
        verdict = verdicts[-1].strip() if verdicts else "no verdict (see profile.log)"
        rows.append(("profiler vs ncu, events", verdict, "", "", ""))
        if not verdict.startswith("OK"):
            failures.append("profiler vs ncu, events")


def main():
    out = sys.argv[1]
    tolerance = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    rows, failures = [], []
    search_rows(out, tolerance, rows, failures)
    test_rows(out, rows, failures)
    other_rows(out, rows, failures)
    print("%-44s %-26s %-16s %-14s %s" % ("what", "result", "", "roofline", "vs ncu"))
    for row in rows:
        print("%-44s %-26s %-16s %-14s %s" % row)
    print("FAIL: " + "; ".join(failures) if failures else "OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
