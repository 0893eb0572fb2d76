#!/usr/bin/env python3
"""Counts the distinct test cases of one `meson test` run from its testlog.json.

usage: count_tests.py LABEL TESTLOG
prints: "LABEL: N passed, M failed, K skipped"

A GoogleTest executable counts each case it reports once, however often its name appears (a
failed case is named when it ends and again in the summary; a parameterised one carries
", where GetParam() = ..." after its name). An executable that crashed or timed out before
reporting a failed case counts one failure more. A test that is not GoogleTest (no case lines)
counts as one case: passed when meson says OK or EXPECTEDFAIL, skipped on SKIP, else failed.
"""
import json
import re
import sys

NAME = r"([A-Za-z_][\w/]*\.[\w/]+)"  # Suite.Case, Prefix/Suite.Case/Param
OK = re.compile(r"^\[       OK \] " + NAME + r" \(", re.M)
FAILED = re.compile(r"^\[  FAILED  \] " + NAME + r"(?:, where GetParam\(\) = | \(|$)", re.M)
SKIPPED = re.compile(r"^\[  SKIPPED \] " + NAME + r"(?: \(|$)", re.M)
GOOD_RESULTS = ("OK", "EXPECTEDFAIL")


def count(lines):
    """(passed, failed, skipped) over the JSON lines of a testlog."""
    passed = failed = skipped = 0
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        out = t.get("stdout") or ""
        ok, bad, skip = set(OK.findall(out)), set(FAILED.findall(out)), set(SKIPPED.findall(out))
        ok -= bad  # a case both reported OK and failed (never in practice) counts as failed
        if ok or bad or skip:
            passed += len(ok)
            failed += len(bad)
            skipped += len(skip)
            if t["result"] not in GOOD_RESULTS + ("SKIP",) and not bad:
                failed += 1  # crashed or timed out before reporting a failed case
        elif t["result"] in GOOD_RESULTS:
            passed += 1
        elif t["result"] == "SKIP":
            skipped += 1
        else:
            failed += 1
    return passed, failed, skipped


def main(argv):
    if len(argv) != 3:
        print("usage: count_tests.py LABEL TESTLOG", file=sys.stderr)
        return 2
    label, path = argv[1], argv[2]
    try:
        with open(path, encoding="utf-8") as f:
            p, m, k = count(f)
    except (OSError, ValueError, KeyError) as e:
        print(f"count_tests.py: {path}: {e}", file=sys.stderr)
        return 1
    print(f"{label}: {p} passed, {m} failed, {k} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
