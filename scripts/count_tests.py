#!/usr/bin/env python3
"""Counts the distinct test cases of one `meson test` run from its testlog.json, and checks its
skipped cases against a list of the skips that are expected.

usage: count_tests.py LABEL TESTLOG [EXPECTED_SKIPS]
prints: "LABEL: N passed, M failed, K skipped" on stdout, and on stderr one line per skipped
case with its reason: "LABEL: skipped NAME: REASON", followed by "(not expected: a failure)"
for a skip EXPECTED_SKIPS does not list.

A GoogleTest executable counts each case it reports once, however often its name appears (a
failed case is named when it ends and again in the summary; a parameterised one carries
", where GetParam() = ..." after its name). An executable that crashed or timed out before
reporting a failed case counts one failure more. A test that is not GoogleTest (no case lines)
counts as one case: passed when meson says OK or EXPECTEDFAIL, skipped on SKIP, else failed.

EXPECTED_SKIPS (tests/expected_skips.txt): one skip a line, "NAME<TAB>REASON", each a shell
pattern (fnmatch) that the case's name and its skip message must match; '#' starts a comment.
Given that file, a skip it does not list counts as failed, not skipped: a test that stops
running where it should (a missing tool, a mount refused) must not pass unnoticed.
"""
import fnmatch
import json
import re
import sys

NAME = r"([A-Za-z_][\w/]*\.[\w/]+)"  # Suite.Case, Prefix/Suite.Case/Param
OK = re.compile(r"^\[       OK \] " + NAME + r" \(", re.M)
FAILED = re.compile(r"^\[  FAILED  \] " + NAME + r"(?:, where GetParam\(\) = | \(|$)", re.M)
SKIPPED = re.compile(r"^\[  SKIPPED \] " + NAME + r"(?: \(|$)", re.M)
# One case's output: from its RUN line to its SKIPPED line; the message follows "Skipped".
SKIP_BLOCK = re.compile(r"^\[ RUN      \] " + NAME + r"\n(.*?)^\[  SKIPPED \] \1 \(", re.M | re.S)
SKIP_MESSAGE = re.compile(r": Skipped\n(.*)", re.S)
GOOD_RESULTS = ("OK", "EXPECTEDFAIL")


def count(lines):
    """(passed, failed, skipped) over the JSON lines of a testlog. Raises ValueError when one
    executable reported a case under two tests: test files that share an executable each run
    their own cases (--tp_file), so such a case would be counted, and run, twice."""
    passed = failed = skipped = 0
    ran_in = {}  # (executable, case) -> test
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        out = t.get("stdout") or ""
        ok, bad, skip = set(OK.findall(out)), set(FAILED.findall(out)), set(SKIPPED.findall(out))
        # The command less its file selector: one executable (or one launcher and its arguments).
        exe = " ".join(a for a in t.get("command") or [] if not a.startswith("--tp_file="))
        for case in (ok | bad | skip) if exe else ():
            other = ran_in.setdefault((exe, case), t["name"])
            if other != t["name"]:
                raise ValueError(f"{case} ran in tests '{other}' and '{t['name']}' of {exe}: "
                                 "each test of a shared executable runs its own file's cases")
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


def skips(lines):
    """[(name, reason)] of the skipped cases, in the log's order: GoogleTest cases by their
    name and GTEST_SKIP message, other tests by their meson name."""
    found = []
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        out = t.get("stdout") or ""
        named = set(SKIPPED.findall(out))
        if named:
            reasons = {}
            for name, body in SKIP_BLOCK.findall(out):
                m = SKIP_MESSAGE.search(body)
                reasons[name] = " ".join(m.group(1).split()) if m else ""
            seen = set()
            for name in SKIPPED.findall(out):  # each case once, in its order
                if name not in seen:
                    seen.add(name)
                    found.append((name, reasons.get(name) or "no reason given"))
        elif t["result"] == "SKIP" and not OK.search(out) and not FAILED.search(out):
            found.append((t["name"], "meson: SKIP (exit status 77)"))
    return found


def read_expected(path):
    """[(name pattern, reason pattern)] from an expected-skips file."""
    expected = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            name, sep, reason = line.partition("\t")
            if not sep or not name.strip() or not reason.strip():
                raise ValueError(f"{path}:{number}: expected NAME<TAB>REASON")
            expected.append((name.strip(), reason.strip()))
    return expected


def is_expected(name, reason, expected):
    return any(fnmatch.fnmatchcase(name, n) and fnmatch.fnmatchcase(reason, r) for n, r in expected)


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: count_tests.py LABEL TESTLOG [EXPECTED_SKIPS]", file=sys.stderr)
        return 2
    label, path = argv[1], argv[2]
    try:
        expected = read_expected(argv[3]) if len(argv) == 4 else None
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        p, m, k = count(lines)
        skipped = skips(lines)
    except (OSError, ValueError, KeyError) as e:
        print(f"count_tests.py: {e}" if isinstance(e, ValueError) else f"count_tests.py: {path}: {e}", file=sys.stderr)
        return 1
    for name, reason in skipped:
        unexpected = expected is not None and not is_expected(name, reason, expected)
        note = f" (not expected: a failure; {argv[3]} lists the expected skips)" if unexpected else ""
        print(f"{label}: skipped {name}: {reason}{note}", file=sys.stderr)
        if unexpected:
            m, k = m + 1, k - 1
    print(f"{label}: {p} passed, {m} failed, {k} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
