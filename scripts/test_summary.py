#!/usr/bin/env python3
"""Prints the test run's summary from ctest's JUnit files: per suite its verdict and counts,
then every skip with its reason (whole suites ctest skipped, and single cases inside suites
that passed), so nothing skipped can pass for tested.

    scripts/test_summary.py build/asan/ctest-junit.xml [build/fuzz/ctest-junit.xml ...]
"""
import re
import sys
import xml.etree.ElementTree as ET


def counts(out):
    """(tests, passed, failed, skipped) as the suite's own runner reported them, or None."""
    # node:test (spec reporter)
    m = {k: int(v) for k, v in re.findall(r"^ℹ (tests|pass|fail|skipped|cancelled) (\d+)$", out, re.M)}
    if "tests" in m:
        return m["tests"], m.get("pass", 0), m.get("fail", 0) + m.get("cancelled", 0), m.get("skipped", 0)
    # doctest: its "skipped" are the cases a filter left out, not skips.
    d = re.search(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", out)
    if d:
        passed, failed = int(d.group(2)), int(d.group(3))
        return passed + failed, passed, failed, 0
    # unittest
    u = re.search(r"^Ran (\d+) tests? in", out, re.M)
    if u:
        return unittest_counts(int(u.group(1)), out)
    # libFuzzer
    f = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    if f:
        return int(f.group(1)), None, None, 0
    return None


# unittest -v: the line each case starts ("test_x (module.Class.test_x) ... "), and from 3.11 on
# the same for a class's or module's fixture that skipped or failed ("setUpClass (module.Class) ... ").
UNITTEST_START = re.compile(r"^(\S+) \([\w.]+\) \.\.\. ", re.M)
UNITTEST_FIXTURES = {"setUpClass", "tearDownClass", "setUpModule", "tearDownModule"}


def unittest_counts(ran, out):
    """(tests, passed, failed, skipped) of a unittest -v run whose summary said "Ran `ran` tests".

    "Ran N" is not the number of cases on every version: 3.12.0 and 3.12.1 leave out the cases
    skipped before they ran (@skip, @skipIf, @skipUnless), which the others count. The verbose
    lines name every case that started, skipped or not, on every version, so the cases are the
    larger of the two. A fixture's skip (SkipTest in setUpClass) is one in "skipped=K" and in no
    "Ran N": it counts as one case (a line "setUpClass (...) ... skipped" from 3.11 on, a bare
    "skipped '...'" on 3.10)."""
    # The last "OK (...)" or "FAILED (...)" line: "failures=F, errors=E, skipped=K".
    tail = (re.findall(r"^(?:OK|FAILED)(?: \((.*)\))?$", out, re.M) or [""])[-1]
    skipped = sum(int(x) for x in re.findall(r"\bskipped=(\d+)", tail))
    failed = sum(int(x) for x in re.findall(r"\b(?:failures|errors|unexpected successes)=(\d+)", tail))
    started = [m.group(1) for m in UNITTEST_START.finditer(out)]
    cases = sum(1 for name in started if name not in UNITTEST_FIXTURES)
    fixtures = len(started) - cases + len(re.findall(r"^skipped (['\"]).*\1$", out, re.M))
    tests = max(ran, cases) + fixtures
    return tests, max(tests - skipped - failed, 0), failed, skipped


def case_skips(out):
    """Skipped cases inside a suite, with their reasons."""
    found = [line[len("STRATA-SKIP "):].strip() for line in out.splitlines() if line.startswith("STRATA-SKIP ")]
    # unittest -v: "test_x (module.Class.test_x) ... skipped 'reason'" (the reason as repr() gives
    # it: in double quotes when it holds an apostrophe)
    found += [f"{m.group(1)}: {m.group(3)}"
              for m in re.finditer(r"^(\S+) \(.*?\) \.\.\. skipped (['\"])(.*)\2$", out, re.M)]
    return found


def main(paths):
    rows, skips, failed = [], [], []
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"test summary: cannot read {path}: {e}")
            failed.append(path)
            continue
        for case in root.iter("testcase"):
            name = case.get("name")
            out = case.findtext("system-out") or ""
            status = case.get("status")
            if case.find("skipped") is not None:
                verdict = "SKIPPED"
                reasons = case_skips(out) or [ln.strip().removeprefix("SKIPPED: ") for ln in out.splitlines()
                                              if ln.startswith("SKIPPED")]
                reasons = reasons or [case.find("skipped").get("message")]
                skips += [f"{name} (whole suite) › {r}" for r in reasons]
            elif status == "fail" or case.find("failure") is not None:
                verdict = "FAILED"
                failed.append(name)
            else:
                verdict = "passed"
            if verdict != "SKIPPED":
                skips += [f"{name} › {s}" for s in case_skips(out)]
            rows.append((name, verdict, counts(out), float(case.get("time") or 0)))

    def cell(x):
        return "-" if x is None else str(x)
    print()
    print("== test summary")
    print(f"{'suite':34} {'verdict':8} {'cases':>6} {'passed':>7} {'failed':>7} {'skipped':>8} {'time':>8}")
    total = [0, 0, 0, 0]
    for name, verdict, c, t in rows:
        c = c or (None, None, None, None)
        if c[1] is not None:  # fuzzing rows count inputs, not cases
            for i, v in enumerate(c):
                total[i] += v
        print(f"{name:34} {verdict:8} {cell(c[0]):>6} {cell(c[1]):>7} {cell(c[2]):>7} {cell(c[3]):>8} {t:7.1f}s")
    print(f"{'all suites':34} {'':8} {total[0]:>6} {total[1]:>7} {total[2]:>7} {total[3]:>8}")
    if any(c and c[1] is None for _, _, c, _ in rows):
        print("(a fuzzing row's cases are the inputs it ran)")
    if skips:
        print(f"\nskipped ({len(skips)}):")
        for s in skips:
            print(f"  - {s}")
    else:
        print("\nskipped: none")
    if failed:
        print(f"\nFAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
