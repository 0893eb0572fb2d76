#!/usr/bin/env python3
"""count_tests.py on a synthetic testlog.json: each distinct case counts once, parameterised
failures one by one, skipped cases are shown with their reasons, a skip the expected list does
not name fails, crashes and non-GoogleTest tests count."""
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


SKIPS = """[ RUN      ] Placement.HostRuns
x.cpp:259: Skipped
needs two CPUs

[  SKIPPED ] Placement.HostRuns (0 ms)
[ RUN      ] Apps.Tshark
y.cpp:135: Skipped
tshark is not installed
and could not be installed

[  SKIPPED ] Apps.Tshark (1 ms)
[ RUN      ] Apps.Bare
[  SKIPPED ] Apps.Bare (0 ms)
[ RUN      ] Apps.Fine
[       OK ] Apps.Fine (2 ms)
[  PASSED  ] 1 test.
[  SKIPPED ] 3 tests, listed below:
[  SKIPPED ] Placement.HostRuns
[  SKIPPED ] Apps.Tshark
[  SKIPPED ] Apps.Bare
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

    def test_a_case_two_tests_of_one_executable_report_is_an_error(self):
        # Test files sharing an executable each run their own cases: one case under two
        # tests means the executable ran more than that test's file.
        ran = "[       OK ] X.Y (1 ms)\n"
        log = [json.dumps({"name": n, "result": "OK", "stdout": ran, "command": ["/b/unit_threads", "--tp_file=" + n]}) + "\n"
               for n in ("a", "b")]
        with self.assertRaisesRegex(ValueError, "X.Y ran in tests 'a' and 'b' of /b/unit_threads"):
            count_tests.count(log)

    def test_the_command_prints_one_labelled_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.writelines(testlog(("flows", "FAIL", PARAM_FAILURES), ("synth", "FAIL", PLAIN)))
        try:
            out = subprocess.run([sys.executable, count_tests.__file__, "release", f.name],
                                 capture_output=True, text=True, check=True).stdout
        finally:
            os.unlink(f.name)
        self.assertEqual(out, "release: 2 passed, 3 failed, 1 skipped\n")


    def test_skipped_cases_are_named_with_their_reason(self):
        log = testlog(("apps", "OK", SKIPS), ("install", "SKIP", ""))
        self.assertEqual(count_tests.skips(log), [
            ("Placement.HostRuns", "needs two CPUs"),
            ("Apps.Tshark", "tshark is not installed and could not be installed"),
            ("Apps.Bare", "no reason given"),
            ("install", "meson: SKIP (exit status 77)"),
        ])

    def run_with_expected(self, expected):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.writelines(testlog(("apps", "OK", SKIPS)))
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as e:
            e.write(expected)
        try:
            return subprocess.run([sys.executable, count_tests.__file__, "release", f.name, e.name],
                                  capture_output=True, text=True)
        finally:
            os.unlink(f.name)
            os.unlink(e.name)

    def test_a_skip_not_in_the_expected_list_is_a_failure_and_every_skip_is_printed(self):
        r = self.run_with_expected("# comment\nPlacement.*\tneeds two CPUs  # a one-CPU host\nApps.Bare\t*\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "release: 1 passed, 1 failed, 2 skipped\n")
        lines = r.stderr.splitlines()
        self.assertEqual(lines[0], "release: skipped Placement.HostRuns: needs two CPUs")
        self.assertTrue(lines[1].startswith("release: skipped Apps.Tshark: tshark is not installed and could not be "
                                            "installed (not expected: a failure;"), lines[1])
        self.assertEqual(lines[2], "release: skipped Apps.Bare: no reason given")

    def test_an_expected_name_skipped_for_another_reason_is_a_failure(self):
        r = self.run_with_expected("Placement.HostRuns\tneeds four CPUs\nApps.*\t*\n")
        self.assertEqual(r.stdout, "release: 1 passed, 1 failed, 2 skipped\n")

    def test_a_malformed_expected_list_is_an_error_naming_its_line(self):
        r = self.run_with_expected("Placement.HostRuns needs two CPUs\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn(":1: expected NAME<TAB>REASON", r.stderr)


if __name__ == "__main__":
    unittest.main()
