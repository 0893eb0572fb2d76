#!/usr/bin/env python3
"""count_tests.py on a synthetic testlog.json: each distinct case counts once, parameterised
failures one by one, skipped cases are shown, crashes and non-GoogleTest tests count."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import count_tests  # noqa: E402

PARAM_FAILURES = """[==========] Running 4 tests from 1 test suite.
[ RUN      ] Pcaps/Flows.Match/a_pcap
[       OK ] Pcaps/Flows.Match/a_pcap (3 ms)
[ RUN      ] Pcaps/Flows.Match/b_pcap
x.cpp:1: Failure
[  FAILED  ] Pcaps/Flows.Match/b_pcap, where GetParam() = "b.pcap" (2 ms)
[ RUN      ] Pcaps/Flows.Match/c_pcap
[  FAILED  ] Pcaps/Flows.Match/c_pcap, where GetParam() = "c.pcap" (2 ms)
[ RUN      ] Pcaps/Flows.Match/d_pcap
[  SKIPPED ] Pcaps/Flows.Match/d_pcap (0 ms)
[==========] 4 tests from 1 test suite ran. (9 ms total)
[  PASSED  ] 1 test.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] Pcaps/Flows.Match/d_pcap
[  FAILED  ] 2 tests, listed below:
[  FAILED  ] Pcaps/Flows.Match/b_pcap, where GetParam() = "b.pcap"
[  FAILED  ] Pcaps/Flows.Match/c_pcap, where GetParam() = "c.pcap"

 2 FAILED TESTS
"""

PLAIN = """[ RUN      ] Synth.A
[       OK ] Synth.A (1 ms)
[ RUN      ] Synth.B
[  FAILED  ] Synth.B (1 ms)
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Synth.B
"""

CRASHED = """[ RUN      ] Ring.One
[       OK ] Ring.One (1 ms)
[ RUN      ] Ring.Two
"""


def testlog(*entries):
    return [json.dumps({"name": n, "result": r, "stdout": out}) + "\n" for n, r, out in entries]


class CountTests(unittest.TestCase):
    def test_parameterised_failures_count_once_each_and_skips_are_counted(self):
        self.assertEqual(count_tests.count(testlog(("flows", "FAIL", PARAM_FAILURES))), (1, 2, 1))

    def test_a_failed_case_named_twice_counts_once(self):
        self.assertEqual(count_tests.count(testlog(("synth", "FAIL", PLAIN))), (1, 1, 0))

    def test_a_crash_after_passing_cases_adds_one_failure(self):
        self.assertEqual(count_tests.count(testlog(("ring", "TIMEOUT", CRASHED))), (1, 1, 0))

    def test_tests_without_cases_count_by_their_result(self):
        log = testlog(("canary", "EXPECTEDFAIL", "UBSan: overflow"), ("py", "OK", ""), ("sk", "SKIP", ""),
                      ("bad", "UNEXPECTEDPASS", "x"), ("dead", "FAIL", ""))
        self.assertEqual(count_tests.count(log), (2, 2, 1))

    def test_the_same_case_name_in_two_executables_counts_twice(self):
        log = testlog(("a", "OK", "[       OK ] X.Y (1 ms)\n"), ("b", "OK", "[       OK ] X.Y (1 ms)\n"))
        self.assertEqual(count_tests.count(log), (2, 0, 0))

    def test_the_command_prints_one_labelled_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.writelines(testlog(("flows", "FAIL", PARAM_FAILURES), ("synth", "FAIL", PLAIN)))
        try:
            out = subprocess.run([sys.executable, count_tests.__file__, "release", f.name],
                                 capture_output=True, text=True, check=True).stdout
        finally:
            os.unlink(f.name)
        self.assertEqual(out, "release: 2 passed, 3 failed, 1 skipped\n")


if __name__ == "__main__":
    unittest.main()
