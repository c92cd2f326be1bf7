#!/usr/bin/env python3
"""The table of scripts/gpu-scaling.sh: OUT/runs.jsonl (one record per search and per A/A
run, each naming its result.json) read with the figures of each result taken in, written
to OUT/runs.json; the runs.json of EARLIER runs' OUT directories joined in; OUT/scaling.md
written and printed. Exit status 1 when the verdicts differ between GPU counts or an A/A
run was significant or missed 1.0.

Usage: scripts/gpu-scaling-table.py OUT [EARLIER_OUT...]"""
import json, os, sys

out, earlier = sys.argv[1], sys.argv[2:]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

# This run's records, with what each result says taken in (the result files stay behind
# on the GPU machine; runs.json carries their figures).
runs = []
for line in open(os.path.join(out, "runs.jsonl")):
    rec = json.loads(line)
    r = load(rec.pop("result"))
    if rec["kind"] == "search":
        rec["candidates"] = {}
        if r:
            rec["search_wall_s"] = r.get("wall_s")
            rec["winner"] = (r.get("winner") or {}).get("id")
            rec["winner_speedup"] = ((r.get("winner") or {}).get("speedup") or {}).get("median")
            checks = timing = 0.0
            for c in r["candidates"]:
                steps = sum(s.get("wall_s", 0) for s in c.get("steps", []))
                session = (c.get("timing") or {}).get("session_s", 0) or 0
                checks += steps
                timing += session
                rec["candidates"][c["id"]] = {"verdict": c["verdict"], "step": c.get("step"),
                                              "checks_s": steps, "timing_s": session,
                                              "speedup": (c.get("speedup") or {}).get("median")}
            rec["checks_s"], rec["timing_s"] = checks, timing
            rec["evaluated"] = sum(1 for c in r["candidates"] if not c.get("duplicate_of"))
            rec["timed"] = sum(1 for c in r["candidates"] if (c.get("timing") or {}).get("session_s"))
    else:
        c = (r or {}).get("candidates", [{}])[0] if r else {}
        s = c.get("speedup") or {}
        rec.update(verdict=c.get("verdict"), median=s.get("median"), low=s.get("low"), high=s.get("high"))
    runs.append(rec)
with open(os.path.join(out, "runs.json"), "w") as f:
    json.dump(runs, f, indent=1)
for d in earlier:
    runs += load(os.path.join(d, "runs.json")) or []

searches = sorted((r for r in runs if r["kind"] == "search"), key=lambda r: r["gpus"])
aas = [r for r in runs if r["kind"] == "aa"]
lines = ["# One search over 1 and 2 GPUs (examples/cuda-plain, replay, 13 candidates)", ""]
bad = 0
if searches:
    lines += ["| GPUs | wall s | candidates evaluated (timed) | evaluated per GPU-hour | builds+checks s (sum) "
              "| timing sessions s (sum) | winner |",
              "| ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for s in searches:
        per_gpu_hour = s.get("evaluated", 0) / (s["wall_s"] * s["gpus"] / 3600) if s["wall_s"] else 0
        win = "%s %.3fx" % (s["winner"], s["winner_speedup"]) if s.get("winner") else "none"
        lines.append("| %d | %.0f | %d (%d) | %.0f | %.0f | %.0f | %s |" % (
            s["gpus"], s["wall_s"], s.get("evaluated", 0), s.get("timed", 0), per_gpu_hour, s.get("checks_s", 0), s.get("timing_s", 0), win))
    ids = sorted(set().union(*(s["candidates"].keys() for s in searches)))
    differ = [i for i in ids if len({s["candidates"].get(i, {}).get("verdict") for s in searches}) > 1]
    lines += ["", "Verdicts: " + ("identical for all %d candidates" % len(ids) if not differ and len(searches) > 1
                                  else "one run only" if len(searches) == 1
                                  else "DIFFERENT for " + ", ".join(differ))]
    bad += bool(differ)
    lines += ["", "| candidate | " + " | ".join("%d GPU" % s["gpus"] for s in searches) + " |",
              "| --- | " + " | ".join("---" for _ in searches) + " |"]
    for i in ids:
        cells = []
        for s in searches:
            c = s["candidates"].get(i, {})
            cells.append("%s%s" % (c.get("verdict", "-"), " %.3fx" % c["speedup"] if c.get("speedup") else ""))
        lines.append("| %s | %s |" % (i, " | ".join(cells)))
    one = next((s for s in searches if s["gpus"] == 1), None)
    two = next((s for s in searches if s["gpus"] == 2), None)
    if one and two:
        # Two points fit T(n) = serial + parallel / n; a step of the batch (4) uses at
        # most 4 GPUs, so past 4 only the serial part is left.
        parallel = 2 * (one["wall_s"] - two["wall_s"])
        serial = one["wall_s"] - parallel
        lines += ["", "Speedup of the search, 2 GPUs over 1: %.2fx. Fitted T(n) = %.0f s + %.0f s / n "
                  "(serial: baseline, A/A, builds and checks of each step, confirmation, sanitizer, witness; "
                  "parallel: the timing sessions)." % (one["wall_s"] / two["wall_s"], serial, parallel)]
        for n in (4, 8):
            t = serial + parallel / min(n, 4)
            lines.append("- expected with %d GPUs: %.0f s (%.2fx over 1)%s" % (
                n, t, one["wall_s"] / t, "; the batch of 4 leaves GPUs 5-8 idle: raise search.batch" if n > 4 else ""))
if aas:
    lines += ["", "## A/A on each GPU while the others are busy", "",
              "| GPU | run | verdict | speedup [95% CI] | covers 1.0 |", "| --- | ---: | --- | --- | --- |"]
    for a in sorted(aas, key=lambda a: (a["gpu"], a["run"])):
        if a.get("median") is None:
            lines.append("| %s | %d | %s (exit %d) | - | - |" % (a["gpu"], a["run"], a.get("verdict"), a["exit_code"]))
            bad += 1
            continue
        covers = a["low"] <= 1.0 <= a["high"]
        bad += not covers or a["verdict"] == "faster"
        lines.append("| %s | %d | %s | %.4fx [%.4f, %.4f] | %s |" % (
            a["gpu"], a["run"], a["verdict"], a["median"], a["low"], a["high"], "yes" if covers else "NO"))
text = "\n".join(lines) + "\n"
open(os.path.join(out, "scaling.md"), "w").write(text)
print(text)
sys.exit(1 if bad else 0)
