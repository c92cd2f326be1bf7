#!/usr/bin/env python3
"""The shape of the C++ source, for people: the longest functions and the largest
classes (their body in a header or source file plus their members defined out of line),
with how many pass the limits the redesign aims at (issue 23: no function over ~60
lines, no class over ~400).

A brace counter, not a parser: string and character literals and // comments are blanked
before braces are counted, and a raw string counts as the function that holds it. Good
enough to find what to split; it prints figures and never fails.

Usage: scripts/code-shape.py [--top N] [--function-limit 60] [--class-limit 400] [DIR...]
(default DIRs: runner bot cli)
"""
import argparse
import collections
import os
import re
import sys

FUNCTION_HEAD = re.compile(r"^[A-Za-z].*\)\s*(const)?\s*(override)?\s*(noexcept)?\s*(->.*)?\{?\s*$")
CLASS_HEAD = re.compile(r"^\s*(?:class|struct)\s+(\w+)[^;]*$")
MEMBER_HEAD = re.compile(r"^[\w:<>,\s\*&]*?\b(\w+)::~?\w+\(")


def code_of(line):
    line = re.sub(r'"([^"\\]|\\.)*"', '""', line)
    line = re.sub(r"'([^'\\]|\\.)*'", "''", line)
    return line.split("//")[0]


def sources(dirs, suffixes):
    for top in dirs:
        for root, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(suffixes):
                    yield os.path.join(root, name)


def functions(path):
    """(lines, line number, head) of each function defined at namespace scope or in a class."""
    lines = open(path, errors="replace").read().split("\n")
    depth, start, start_depth, head = 0, None, 0, ""
    for i, line in enumerate(lines):
        for ch in code_of(line):
            if ch == "{":
                depth += 1
                if start is None and FUNCTION_HEAD.match(line.strip()):
                    start, start_depth, head = i, depth, line.strip()
            elif ch == "}":
                depth -= 1
                if start is not None and depth < start_depth:
                    yield i - start + 1, start + 1, head
                    start = None


def class_lines(paths):
    """Lines per class: its body wherever it is declared, plus members defined as X::f."""
    total = collections.Counter()
    for path in paths:
        depth, start, start_depth, name = 0, None, 0, ""
        for i, line in enumerate(open(path, errors="replace").read().split("\n")):
            code = code_of(line)
            if start is None:
                body = CLASS_HEAD.match(code)
                member = MEMBER_HEAD.match(code)
                if body and "{" in code:
                    start, start_depth, name = i, depth, body.group(1)
                elif member and depth <= 1:
                    start, start_depth, name = i, depth, member.group(1)
            for ch in code:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if start is not None and depth == start_depth:
                        total[name] += i - start + 1
                        start = None
            if start is not None and depth == start_depth and code.strip().endswith(";"):
                start = None  # a declaration, not a definition
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", default=["runner", "bot", "cli"])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--function-limit", type=int, default=60)
    parser.add_argument("--class-limit", type=int, default=400)
    args = parser.parse_args()
    found = [(n, f"{path}:{line}", head[:70]) for path in sources(args.dirs, (".cc",))
             for n, line, head in functions(path)]
    found.sort(reverse=True)
    classes = class_lines(list(sources(args.dirs, (".cc", ".h"))))
    print(f"functions: {len(found)}; over {args.function_limit} lines: "
          f"{sum(1 for n, _, _ in found if n > args.function_limit)}")
    print("| lines | function | where |\n| ---: | --- | --- |")
    for n, where, head in found[:args.top]:
        print(f"| {n} | `{head}` | {where} |")
    print(f"\nclasses: {len(classes)}; over {args.class_limit} lines: "
          f"{sum(1 for c in classes.values() if c > args.class_limit)}")
    print("| lines | class |\n| ---: | --- |")
    for name, n in classes.most_common(args.top):
        print(f"| {n} | `{name}` |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
