#!/usr/bin/env python3
"""Writes the definition of FUNCTION exactly as it stands in REPO/src (the first file that
defines it), so that it can be evaluated as a candidate identical to the original: an
A/A run (scripts/aa-check.sh, scripts/gpu-scaling.sh).

Usage: scripts/original-definition.py REPO FUNCTION OUT"""
import pathlib
import re
import sys


def main():
    repo, function, out = sys.argv[1:4]
    for path in sorted(pathlib.Path(repo, "src").rglob("*.c*")):
        text = path.read_text()
        m = re.search(r"^[^\n#/]*\b" + re.escape(function) + r"\s*\(", text, re.M)
        if not m:
            continue
        start, depth = m.start(), 0
        for j in range(text.index("{", m.end()), len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                pathlib.Path(out).write_text(text[start:j + 1])
                return 0
    sys.exit("original-definition: no definition of %s under %s/src" % (function, repo))


if __name__ == "__main__":
    sys.exit(main())
