#!/usr/bin/env python3
"""The plain-benchmark cheat suite's verdicts (examples/cuda-plain) held against what is
expected of each candidate (cheats-expected.json): each candidate's verdict and reason, a
line per candidate, and the exit status 1 when a cheat got a verdict it must not get, a
candidate was not evaluated, or the honest rewrite did not win.

Usage: scripts/plain-verdicts.py RESULT.json EXPECTED.json [LABEL]
LABEL starts each line (default "plain"); scripts/gpu-check.sh and scripts/gpu-scaling.sh
call it."""
import json
import sys

HONEST = "05-rows-per-thread.cu"


def alternatives(field):  # a string, or an array of which any one will do
    return [field] if isinstance(field, str) else field


def main():
    result_path, expected_path = sys.argv[1:3]
    label = sys.argv[3] if len(sys.argv) > 3 else "plain"
    try:
        with open(result_path) as f:
            r = json.load(f)
    except (OSError, ValueError) as error:
        print("%s: no readable result.json (%s)" % (label, error))
        return 1
    with open(expected_path) as f:
        expected = json.load(f)
    bad = 0
    for c in r["candidates"]:
        want = expected.get(c["id"])
        ok = want is None or (c["verdict"] in alternatives(want["verdict"]) and
                              any(part in c.get("reason", "") for part in alternatives(want["reason"])))
        bad += not ok
        print("%s %-34s %-10s %s %s" % (label, c["id"], c["verdict"], "" if ok else "UNEXPECTED",
                                        c.get("reason", "")[:200]))
    for name in sorted(set(expected) - {c["id"] for c in r["candidates"]}):
        bad += 1
        print("%s %-34s NOT EVALUATED" % (label, name))
    w = r.get("winner")
    print("%s winner: %s" % (label, w["id"] + " %.3fx" % w["speedup"]["median"] if w else "none"))
    for a in r.get("audit", []):
        for finding in a.get("findings", []):
            print("%s audit: %s" % (label, finding))
    return 1 if bad or not w or w["id"] != HONEST else 0


if __name__ == "__main__":
    sys.exit(main())
