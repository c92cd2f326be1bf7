#!/usr/bin/env python3
"""Fuzzes the inputs maxcode reads (issue 22, point 9) and counts crashes and hangs.

Generates mutated configs (.maxcode.json), job documents, sweep documents, replay
candidate files and model replies, and feeds each to `maxcode check-input --kind KIND
FILE`, which reads and checks an input the way a run does and runs nothing. Mutations:
truncation, deep nesting, huge numbers, bytes that are not UTF-8, duplicate keys, long
strings, path traversal, wrong types, byte flips, and for code long #define lines, deep
braces and broken fences; one to three per input.

An input is fine when maxcode exits 0 (accepted) or 1 (rejected with a message). A
signal is a crash, running past --timeout is a hang, and for the JSON kinds a rejection
that names neither the file nor anything in it is counted as "unclear". Every crash or
hang input is kept under --keep for a rerun. Exits 1 when there is any crash or hang.

  scripts/fuzz-inputs.py [--maxcode build/maxcode] [--count 10000] [--seed 1] [--jobs 2]
                         [--timeout 10] [--keep fuzz-failures]

ctest runs a short sample (fuzz_inputs_short, 300 inputs).
"""

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

KINDS = ["config", "job", "sweep", "replay", "reply"]

BASE_CONFIG = {
    "$schema": "https://maxcode.dev/schema/maxcode.schema.json",
    "build": {"configure": "cmake -S . -B build", "command": "cmake --build build -j", "timeout_s": 600},
    "test": {"command": "ctest --test-dir build", "timeout_s": 60},
    "benchmarks": [
        {"name": "main", "command": "./build/bench", "metric": "wall", "compare_output": True, "rtol": 1e-6},
        {"name": "gpu", "command": "./build/gpu", "metric": "kernels", "kernels": ["histo.*"],
         "warmup_launches": 2, "roofline": {"bytes": 1e9, "flops": 0}},
    ],
    "scope": {"include": ["src/**"], "exclude": ["third_party/**"]},
    "targets": {"functions": ["histogram", "ns::Cls::fn"], "signature": "int histogram(",
                "interface": {"out": "width * height"}, "prefer": "gpu",
                "unit": {"add": ["helper"], "leave_out": ["other"]}},
    "search": {"policy": "tune", "max_evaluations": 32, "batch": 4, "proposals": 4, "replay_dir": "replay",
               "knobs": [{"name": "LANES", "values": [1, 2, 4, 8], "file": "src/histo.cc"}], "seed": 7,
               "max_wall_s": 3600, "max_tokens": 100000, "max_dollars": 5, "critic": "metrics",
               "reranker": "none", "trajectory_window": 8},
    "acceptance": {"min_speedup": 1.05, "seeds": [1234567, 2718281, 3141592], "warmup_rounds": 1, "min_rounds": 5, "max_rounds": 30,
                   "max_timing_s": 300, "target_relative_width": 0.05},
    "workspace": {"exclude": ["build/**"], "output_cap_bytes": 1048576, "isolate": True, "env_allow": ["OMP_*"]},
    "gpu": {"sanitizer": ["memcheck", "racecheck"], "sanitize": "test", "sanitizer_timeout_s": 600, "ptxas_report": True,
            "ncu": True, "ncu_kernels": 4, "ncu_timeout_s": 600, "witness": True, "witness_tolerance": 0.25},
    "llm": {"propose": {"provider": "openai", "model": "gpt-4.1", "temperature": 0.7, "max_tokens": 4096,
                        "price": {"input_per_mtok": 2, "output_per_mtok": 8}},
            "critique": {"provider": "command", "command": "./critic.sh", "timeout_s": 60},
            "rerank": {"provider": "openai", "model": "rtg-small", "base_url": "http://127.0.0.1:8000/v1",
                       "api_key_env": ""}},
}

BASE_JOB = {
    "$schema": "https://maxcode.dev/schema/job-input.schema.json",
    "repository": "https://github.com/acme/histo.git",
    "ref": "main",
    "config": "ci/maxcode.json",
    "targets": ["histogram"],
    "max_targets": 2,
    "min_share": 0.05,
    "budget": {"evaluations": 16, "wall_s": 600, "tokens": 1000, "dollars": 2.5, "gpu_s": 30},
    "policy": "replay",
    "replay_dir": "replay",
    "git_token_env": "MY_TOKEN",
    "delivery": {"mode": "pr", "repo": "acme/histo", "base": "dev", "api_url": "https://api.github.com"},
    "compare_with": "0123456789abcdef",
}

BASE_SWEEP = {
    "history": "history.sqlite",
    "out": "nightly",
    "night": "2025-01-31",
    "budget": {"evaluations": 8},
    "min_growth": 1.1,
    "min_z": 3,
    "same_night_check": True,
    "jobs": [{"repository": "/srv/a"}, dict(BASE_JOB)],
}

BASE_CODE = [
    "int target(const int* a, std::size_t n) {\n  int s = 0;\n  for (std::size_t i = 0; i < n; ++i) s += helper(a[i]);\n  return s;\n}\n",
    "static inline int twice(int x) { return 2 * x; }\n\nint target(const int* a, std::size_t n) {\n"
    "  int s = 0;\n#pragma unroll 4\n  for (std::size_t i = 0; i < n; ++i) s += twice(a[i]) * LANES;\n  return s;\n}\n",
    "--- a/src/target.cc\n+++ b/src/target.cc\n@@ -7,5 +7,3 @@\n int target(const int* a, std::size_t n) {\n"
    "-  int s = 0;\n-  for (std::size_t i = 0; i < n; ++i) s += helper(a[i]);\n-  return s;\n+  return 0;\n }\n",
]

BASE_REPLY = [
    "Unrolling by four should help, about 1.8x.\n\n```cpp\n" + BASE_CODE[1] + "```\n",
    "2.5",
    "```cpp\n" + BASE_CODE[0] + "```\nThe loop is memory bound.",
    "I cannot help with that.",
]

HUGE_NUMBERS = ["1e400", "1e999", "-1e999", "1e-400", "18446744073709551616", "-9223372036854775809",
                "123456789012345678901234567890", "0.0000000000000000000000000000001", "1E308", "-0", "4.9e-324"]
TRAVERSALS = ["../x", "../../etc/passwd", "/etc/passwd", "a/../../b", "./../..", "..", "src/../../../..",
              "replay/../../../tmp", "\\..\\..\\windows", "~/x", "a/./../../.."]
BAD_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xe2\x82",
             b"\x00", b"\x1b[31m", b"\r", b"\xef\xbb\xbf"]


def long_length(rng):
    """Lengths up to 50 MB; the large ones rare, so that a run stays within minutes."""
    roll = rng.random()
    if roll < 0.005:
        return rng.choice([5_000_000, 20_000_000, 50_000_000])
    if roll < 0.2:
        return rng.choice([65_536, 100_000, 200_000, 1_000_000])
    return rng.choice([300, 4097, 10_000, 60_000])


# --- JSON documents: mutations of the parsed value, then of its text -------------------

def paths_of(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths_of(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths_of(v, prefix + (i,))


def replace_at(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = replace_at(value[head], rest, new)
        return out
    out = list(value)
    out[head] = replace_at(value[head], rest, new)
    return out


def get_at(value, path):
    for p in path:
        value = value[p]
    return value


class Raw:
    """A piece of JSON text to splice in as it is (huge numbers, deep nesting)."""

    def __init__(self, text):
        self.text = text


def to_text(value, rng):
    """JSON text of `value`, with Raw pieces spliced in and, sometimes, keys repeated."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        items = [json.dumps(k) + ": " + to_text(v, rng) for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(to_text(v, rng) for v in value) + "]"
    return json.dumps(value)


def deep_text(rng):
    depth = rng.choice([513, 1000, 10_000, 100_000, 1_000_000])
    if rng.random() < 0.5:
        return "[" * depth + "1" + "]" * depth
    return '{"a": ' * depth + "1" + "}" * depth


def mutate_value(doc, rng):
    """One structural mutation; returns (document, description)."""
    paths = list(paths_of(doc))
    path = rng.choice(paths)
    kind = rng.choice(["huge-number", "deep", "long-string", "traversal", "wrong-type", "duplicate-key",
                       "unknown-field", "bad-utf8-string", "delete", "empty"])
    if kind == "huge-number":
        return replace_at(doc, path, Raw(rng.choice(HUGE_NUMBERS + ["9" * rng.choice([400, 200_000])]))), kind
    if kind == "deep":
        return replace_at(doc, path, Raw(deep_text(rng))), kind
    if kind == "long-string":
        alphabet = rng.choice(["a", "/", "x-", "é", "::", "(", "*", "\\\\"])
        n = long_length(rng)
        return replace_at(doc, path, Raw('"' + alphabet * (n // len(alphabet)) + '"')), kind
    if kind == "traversal":
        # The fields that name paths, when the document has them; else anywhere.
        named = [p for p in paths if p and p[-1] in ("config", "replay_dir", "file", "history", "out")] or paths
        return replace_at(doc, rng.choice(named), rng.choice(TRAVERSALS)), kind
    if kind == "wrong-type":
        return replace_at(doc, path, rng.choice([None, True, 0, -1, 1.5, "", "x", [], {}, [[]], {"a": {}}])), kind
    if kind == "duplicate-key":
        objects = [p for p in paths if isinstance(get_at(doc, p), dict) and get_at(doc, p)]
        if not objects:
            return doc, kind
        p = rng.choice(objects)
        obj = get_at(doc, p)
        key = rng.choice(list(obj))
        text = to_text(obj, rng)
        dup = Raw(text[:-1] + ", " + json.dumps(key) + ": " + to_text(rng.choice([obj[key], "other", 1, None]), rng) + "}")
        return replace_at(doc, p, dup), kind
    if kind == "unknown-field":
        objects = [p for p in paths if isinstance(get_at(doc, p), dict)]
        if not objects:
            return doc, kind
        p = rng.choice(objects)
        obj = dict(get_at(doc, p))
        name = rng.choice(["comand", "timeout", "x" * long_length(rng), "", "\u00e9", "$schema2", "build "])
        obj[name] = 1
        return replace_at(doc, p, obj), kind
    if kind == "bad-utf8-string":
        return replace_at(doc, path, Raw('"ok' + rng.choice(BAD_BYTES).decode("latin-1") + '"')), kind
    if kind == "delete" and path:
        parent = get_at(doc, path[:-1])
        if isinstance(parent, dict):
            parent = {k: v for k, v in parent.items() if k != path[-1]}
        else:
            parent = [v for i, v in enumerate(parent) if i != path[-1]]
        return replace_at(doc, path[:-1], parent), kind
    return replace_at(doc, path, Raw("")), "empty"


def mutate_bytes(data, rng):
    """One mutation of the raw bytes; returns (bytes, description)."""
    kind = rng.choice(["truncate", "bad-bytes", "flip", "splice-deep", "splice-number"])
    if not data:
        return data, kind
    at = rng.randrange(len(data) + 1)
    if kind == "truncate":
        return data[:at], kind
    if kind == "bad-bytes":
        return data[:at] + rng.choice(BAD_BYTES) + data[at:], kind
    if kind == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(out))
            out[i] = rng.randrange(256)
        return bytes(out), kind
    if kind == "splice-deep":
        return data[:at] + deep_text(rng).encode() + data[at:], kind
    return data[:at] + rng.choice(HUGE_NUMBERS).encode() + data[at:], kind


def json_input(base, rng):
    doc = base
    notes = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.7:
            doc, note = mutate_value(doc, rng)
            notes.append(note)
    # Raw pieces hold bad bytes as latin-1 characters: put the bytes back.
    data = restore_bytes(to_text(doc, rng).encode("utf-8"))
    if rng.random() < 0.35 or not notes:
        data, note = mutate_bytes(data, rng)
        notes.append(note)
    return data, notes


def restore_bytes(data):
    for b in BAD_BYTES:
        s = b.decode("latin-1")
        data = data.replace(s.encode("utf-8"), b)
    return data


# --- Code: replay files and replies ---------------------------------------------------

def code_input(base, rng):
    text = base.encode()
    notes = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["long-define", "long-line", "deep-braces", "bad-bytes", "digits", "truncate",
                           "fence", "knob-comment", "crlf", "undef", "flip"])
        at = rng.randrange(len(text) + 1)
        n = long_length(rng)
        if kind == "long-define":
            name = rng.choice(["LANES", "target", "helper", "X" * min(n, 100_000), "MINE"])
            piece = ("#define " + name + " " + "1" * n + "\n").encode()
        elif kind == "long-line":
            piece = ("  int s = " + " + ".join(["a[0]"] * (n // 7)) + ";\n").encode()
        elif kind == "deep-braces":
            d = rng.choice([100, 10_000, 200_000])
            piece = ("{" * d + "}" * d + "\n" + "(" * d + ")" * d).encode()
        elif kind == "bad-bytes":
            piece = rng.choice(BAD_BYTES) * rng.randint(1, 1000)
        elif kind == "digits":
            piece = (rng.choice(["", "-", "+", "0."]) + "9" * rng.choice([400, 200_000]) +
                     rng.choice(["", "e999", "e-999", "x"])).encode()
        elif kind == "truncate":
            text = text[:at]
            notes.append(kind)
            continue
        elif kind == "fence":
            piece = rng.choice([b"```", b"```cpp\n", b"\n```\n```c++\n", b"~~~", b"```" * 1000])
        elif kind == "knob-comment":
            piece = ("#define LANES 4  // maxcode: tune LANES" + " 1" * (n // 2) + "\n").encode()
        elif kind == "crlf":
            text = text.replace(b"\n", b"\r\n")
            notes.append(kind)
            continue
        elif kind == "undef":
            piece = ("#undef " + " " * n + "LANES\n").encode()
        else:
            out = bytearray(text or b" ")
            for _ in range(rng.randint(1, 8)):
                out[rng.randrange(len(out))] = rng.randrange(256)
            text = bytes(out)
            notes.append(kind)
            continue
        text = text[:at] + piece + text[at:]
        notes.append(kind)
    return text, notes


def generate(kind, rng):
    if kind == "config":
        return json_input(BASE_CONFIG, rng)
    if kind == "job":
        return json_input(BASE_JOB, rng)
    if kind == "sweep":
        return json_input(BASE_SWEEP, rng)
    if kind == "replay":
        return code_input(rng.choice(BASE_CODE), rng)
    return code_input(rng.choice(BASE_REPLY), rng)


# --- Running ----------------------------------------------------------------------------

def run_one(maxcode, kind, path, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run([maxcode, "check-input", "--kind", kind, path], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return "hang", None, (e.stderr or b"")[:300], time.monotonic() - start
    code = p.returncode
    if code < 0:
        return "crash", code, p.stderr[-300:], time.monotonic() - start
    if code == 0:
        return "accepted", code, b"", time.monotonic() - start
    if code == 1:
        message = p.stderr.decode("utf-8", "replace")
        clear = kind in ("replay", "reply") or path in message
        return ("rejected" if clear else "unclear"), code, p.stderr[:300], time.monotonic() - start
    return "other-exit", code, p.stderr[:300], time.monotonic() - start


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--maxcode", default=os.path.join(here, "..", "build", "maxcode"))
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--keep", default="fuzz-failures")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if not os.access(args.maxcode, os.X_OK):
        sys.exit(f"fuzz-inputs: no maxcode program at {args.maxcode} (--maxcode)")

    counts = {}
    by_kind = {k: {} for k in KINDS}
    failures = []
    work = tempfile.mkdtemp(prefix="maxcode-fuzz-")
    start = time.monotonic()
    slowest = (0.0, "")

    def task(i):
        # Each input from its own generator: the same seed and index give the same input.
        r = random.Random(args.seed * 1_000_003 + i)
        kind = KINDS[i % len(KINDS)]
        data, notes = generate(kind, r)
        path = os.path.join(work, f"{i:06d}-{kind}")
        with open(path, "wb") as f:
            f.write(data)
        outcome, code, err, seconds = run_one(args.maxcode, kind, path, args.timeout)
        kept = None
        if outcome in ("crash", "hang", "other-exit"):
            os.makedirs(args.keep, exist_ok=True)
            kept = os.path.join(args.keep, os.path.basename(path))
            shutil.copyfile(path, kept)
        os.unlink(path)
        return i, kind, notes, outcome, code, err, seconds, len(data), kept

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for i, kind, notes, outcome, code, err, seconds, size, kept in pool.map(task, range(args.count)):
                counts[outcome] = counts.get(outcome, 0) + 1
                by_kind[kind][outcome] = by_kind[kind].get(outcome, 0) + 1
                if seconds > slowest[0]:
                    slowest = (seconds, f"#{i} {kind} {size} bytes {'+'.join(notes)}")
                if outcome in ("crash", "hang", "other-exit", "unclear"):
                    failures.append((i, kind, notes, outcome, code, err, kept))
                    if args.verbose or outcome != "unclear":
                        sig = f" (signal {signal.Signals(-code).name})" if outcome == "crash" else ""
                        print(f"#{i} {kind} {'+'.join(notes)}: {outcome}{sig} {err[:200]!r}"
                              + (f" kept {kept}" if kept else ""), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    elapsed = time.monotonic() - start
    crashes, hangs = counts.get("crash", 0), counts.get("hang", 0)
    print(f"fuzz-inputs: {args.count} inputs (seed {args.seed}) in {elapsed:.0f} s: "
          f"{crashes} crash(es), {hangs} hang(s) (timeout {args.timeout:g} s), "
          f"{counts.get('accepted', 0)} accepted, {counts.get('rejected', 0)} rejected with a message naming the file, "
          f"{counts.get('unclear', 0)} unclear, {counts.get('other-exit', 0)} other exits")
    for kind in KINDS:
        print(f"  {kind:7} " + ", ".join(f"{k} {v}" for k, v in sorted(by_kind[kind].items())))
    print(f"  slowest: {slowest[0]:.2f} s ({slowest[1]})")
    return 1 if crashes or hangs or counts.get("other-exit", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
