#!/usr/bin/env python3
"""Tests of collection_overhead.py without a GPU: its rows, table, goal lines, floor and store
checks, variants, skips and time limit, against fake programs that print what launch_loop,
torch_tiny_ops.py, the floor and `strata gpu run` would (the GPU check is replaced)."""
import contextlib
import io
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import collection_overhead  # noqa: E402

# One fake for launch_loop and for "python torch_tiny_ops.py": ns per launch by what it runs
# under (plain, the floor, a Strata mode, a variant, torch.profiler), the floor's line at exit,
# and for Strata the kernels "stored" (written where the fake strata says).
FAKE_PROGRAM = r'''
import os, sys, time
args = sys.argv[1:]
torch = bool(args) and args[0].endswith(".py")
if torch:
    if os.environ.get("FAKE_TORCH_NO_CUDA"):
        print("torch_tiny_ops: no CUDA: fake torch without CUDA")
        sys.exit(3)
    args = args[1:]
n = int(args[0])
inj = os.environ.get("CUDA_INJECTION64_PATH", "")
mode = os.environ.get("STRATA_GPU_MODE") or ("floor" if inj.endswith("floor.so") else "plain")
if mode == "floor" and os.environ.get("STRATA_FLOOR_KINDS"):
    mode = "floor-" + os.environ["STRATA_FLOOR_KINDS"]
if mode == "trace" and os.environ.get("STRATA_GPU_ERRORS") == "0":
    mode = "trace-quiet"
if "--profiler" in args:
    mode = "profiler"
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(("torch " if torch else "c ") + mode + "\n")
ns = {"plain": 3600, "floor": 3800, "floor-kernel+memcpy": 3850, "off": 3650, "trace": 4100, "stacks": 4700,
      "trace-quiet": 3900}
tns = {"plain": 8000, "floor": 8300, "floor-kernel+memcpy": 8350, "off": 8100, "trace": 8600, "stacks": 9800,
       "trace-quiet": 8400, "profiler": 11500}
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
if mode == os.environ.get("FAKE_HANG") and n != 1000:
    with open(os.environ["FAKE_LOG"] + ".hung", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
print(f"fake: {n} launches: {(tns if torch else ns)[mode]:.1f} ns per launch" + (" (torch fake)" if torch else ""))
if mode.startswith("floor"):
    short = int(os.environ.get("FAKE_FLOOR_SHORT", "0"))
    print(f"strata-cupti-floor: {n + 1000 - short} kernels, 0 dropped", file=sys.stderr)
if os.environ.get("FAKE_STORE") and mode != "off":
    with open(os.environ["FAKE_STORE"], "w") as f:
        f.write(str(n + 1000 - int(os.environ.get("FAKE_STORE_SHORT", "0"))))
'''

# `strata gpu run --MODE --store FILE -- PROGRAM...` and `strata gpu sql ... --json FILE`.
FAKE_STRATA = r'''
import json, os, subprocess, sys
a = sys.argv[1:]
if a[:2] == ["gpu", "run"]:
    store = a[a.index("--store") + 1]
    with open(store, "w") as f:
        f.write("0")
    env = dict(os.environ, STRATA_GPU_MODE=a[2][2:], FAKE_STORE=store, CUDA_INJECTION64_PATH="/x/libstrata_cupti.so")
    sys.exit(subprocess.call(a[a.index("--") + 1:], env=env))
if a[:2] == ["gpu", "sql"]:
    print(json.dumps({"columns": ["count(*)"], "rows": [[int(open(a[-1]).read())]]}))
    sys.exit(0)
sys.exit(2)
'''


def write_script(path, body):
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\n{body}")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def alive(pid):
    """Whether pid runs, within a second (a zombie left to a PID 1 that never reaps is dead)."""
    for _ in range(20):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.05)
    return True


class OverheadBench(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="strata-overhead-test-")
        d = self.dir.name
        self.loop, self.python, self.strata = (os.path.join(d, n) for n in ("launch_loop", "python", "strata"))
        write_script(self.loop, FAKE_PROGRAM)
        write_script(self.python, FAKE_PROGRAM)
        write_script(self.strata, FAKE_STRATA)
        self.floor = os.path.join(d, "libstrata_cupti_floor.so")
        open(self.floor, "w").close()
        self.log = os.path.join(d, "log")
        self.saved_env = dict(os.environ)
        os.environ["FAKE_LOG"] = self.log
        self.saved_absent = collection_overhead.gpu_absent
        collection_overhead.gpu_absent = lambda: None

    def tearDown(self):
        collection_overhead.gpu_absent = self.saved_absent
        os.environ.clear()
        os.environ.update(self.saved_env)
        self.dir.cleanup()

    def bench(self, *extra, rounds=3):
        """main() on the fakes: (exit status, stdout); argparse's complaints land in self.err."""
        out, err = io.StringIO(), io.StringIO()
        argv = ["--strata", self.strata, "--loop", self.loop, "--floor", self.floor, "--python", self.python,
                "--launches", "500", "--launches-torch", "200", "--rounds", str(rounds), *extra]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = collection_overhead.main(argv)
            except SystemExit as e:
                rc = e.code
        self.err = err.getvalue()
        return rc, out.getvalue()

    def table(self, text, title):
        """{mode: cells} of the table under the heading that starts with title."""
        section = text.split("### " + title, 1)[1].split("###", 1)[0]
        rows = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 6 and cells[0] not in ("mode", "---"):
                rows[cells[0]] = cells[1:]
        return rows, section

    def test_rows_table_and_goals_of_both_loops(self):
        rc, out = self.bench("--variant", "quiet:STRATA_GPU_ERRORS=0", "--floor-kinds", "kernel+memcpy")
        self.assertEqual(rc, 0, out)
        c, c_text = self.table(out, "launch_loop")
        self.assertEqual(list(c), ["plain", "cupti-floor", "cupti-floor kernel+memcpy", "off", "trace", "stacks",
                                   "trace quiet (STRATA_GPU_ERRORS=0)"])
        self.assertEqual(c["plain"][:4], ["3600.0 / 3600.0", "—", "-0.20 µs", "—"])
        self.assertEqual(c["cupti-floor"][:4], ["3800.0 / 3800.0", "+0.20 µs", "—", "+5.6 %"])
        self.assertEqual(c["trace"][:4], ["4100.0 / 4100.0", "+0.50 µs", "+0.30 µs", "+13.9 %"])
        self.assertEqual(c["trace quiet (STRATA_GPU_ERRORS=0)"][0], "3900.0 / 3900.0")
        self.assertEqual(c["cupti-floor kernel+memcpy"][0], "3850.0 / 3850.0")
        self.assertIn("trace within 0.5 µs a launch of the floor: yes (+0.30 µs)", c_text)
        self.assertIn("trace below torch.profiler: n/a", c_text)
        self.assertIn("stacks within 1 µs a launch of trace: yes (+0.60 µs)", c_text)
        t, t_text = self.table(out, "torch_tiny_ops")
        self.assertEqual(list(t), list(c) + ["torch.profiler"])
        self.assertEqual(t["torch.profiler"][:2], ["11500.0 / 11500.0", "+3.50 µs"])
        self.assertIn("trace within 0.5 µs a launch of the floor: yes (+0.30 µs)", t_text)
        self.assertIn("trace below torch.profiler: yes (trace 8600.0, torch.profiler 11500.0 ns per launch)", t_text)
        self.assertIn("stacks within 1 µs a launch of trace: no (+1.20 µs)", t_text)
        self.assertIn(f"torch loop with {self.python}: fake: 100 launches: 8000.0 ns per launch (torch fake)", out)
        # Every round runs the same processes in the same order, loop by loop.
        with open(self.log) as f:
            runs = f.read().split()
        runs = [" ".join(runs[i:i + 2]) for i in range(0, len(runs), 2)]
        probes, timed = runs[:2], runs[2:]
        self.assertEqual(probes, ["c plain", "torch plain"])
        self.assertEqual(len(timed) % 3, 0)
        per_round = len(timed) // 3
        self.assertEqual(timed[:per_round], timed[per_round:2 * per_round])
        self.assertEqual(timed[:per_round], timed[2 * per_round:])
        self.assertEqual(timed[0], "c plain")
        self.assertEqual(timed[-1], "torch profiler")

    def test_floor_that_missed_kernels_is_not_a_floor(self):
        os.environ["FAKE_FLOOR_SHORT"] = "1500"  # 500 launches + 1000 warm-up - 1500: none traced
        rc, out = self.bench(rounds=1)
        self.assertEqual(rc, 1, out)
        c, c_text = self.table(out, "launch_loop")
        self.assertEqual(c["cupti-floor"][0], "not measured")
        self.assertIn("the floor traced 0 kernels of the 500 launched", c["cupti-floor"][4])
        self.assertIn("trace within 0.5 µs a launch of the floor: not measured (cupti-floor: no run counted)", c_text)
        self.assertRegex(out, r"failed: launch_loop, cupti-floor: round 1: the floor traced 0 kernels")

    def test_store_short_of_kernels_voids_the_strata_row(self):
        os.environ["FAKE_STORE_SHORT"] = "1100"
        rc, out = self.bench(rounds=1)
        self.assertEqual(rc, 1, out)
        c, _ = self.table(out, "launch_loop")
        self.assertEqual(c["trace"][0], "not measured")
        self.assertIn("the store holds 400 kernels of the 500 launched", c["trace"][4])
        self.assertEqual(c["off"][0], "3650.0 / 3650.0")  # off stores nothing: nothing to count

    def test_torch_without_cuda_is_skipped_with_its_reason(self):
        os.environ["FAKE_TORCH_NO_CUDA"] = "1"
        rc, out = self.bench(rounds=1)
        self.assertEqual(rc, 0, out)
        self.assertIn("torch loop skipped: torch_tiny_ops: no CUDA: fake torch without CUDA", out)
        self.assertNotIn("### torch_tiny_ops", out)
        self.assertIn("### launch_loop", out)

    def test_missing_floor_is_reported_and_the_rest_measured(self):
        os.unlink(self.floor)
        os.environ["FAKE_TORCH_NO_CUDA"] = "1"
        rc, out = self.bench(rounds=1)
        self.assertEqual(rc, 1, out)
        c, c_text = self.table(out, "launch_loop")
        self.assertNotIn("cupti-floor", c)
        self.assertEqual(c["trace"][0], "4100.0 / 4100.0")
        self.assertRegex(out, r"failed: no floor rows: .*libstrata_cupti_floor.so does not exist")

    def test_rounds_that_would_not_fit_are_not_started(self):
        os.environ["FAKE_TORCH_NO_CUDA"] = "1"
        os.environ["FAKE_SLEEP"] = "0.3"
        rc, out = self.bench("--timeout-total", "3", rounds=5)
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"stopped after 1 of 5 rounds")
        c, _ = self.table(out, "launch_loop")
        self.assertEqual(c["plain"][0], "3600.0 / 3600.0")

    def test_a_run_past_the_time_limit_is_killed_with_its_program(self):
        os.environ["FAKE_TORCH_NO_CUDA"] = "1"
        os.environ["FAKE_HANG"] = "trace"  # the program under strata gpu run --trace never ends
        started = time.monotonic()
        rc, out = self.bench("--timeout-total", "4", rounds=2)
        self.assertLess(time.monotonic() - started, 20)
        self.assertEqual(rc, 1, out)
        self.assertIn("stopped in round 1: --timeout-total 4 s reached", out)
        c, _ = self.table(out, "launch_loop")
        self.assertEqual(c["trace"][0], "not measured")
        self.assertRegex(c["trace"][4], r"round 1: killed after \d+ s \(--timeout-total\)")
        self.assertEqual(c["stacks"][0], "not measured")  # never started
        with open(self.log + ".hung") as f:
            pid = int(f.read())
        self.assertFalse(alive(pid), "strata's child outlived the timeout")

    def test_variant_that_strata_overrides_is_refused(self):
        rc, out = self.bench("--variant", "fast:STRATA_GPU_FLUSH_MS=10")
        self.assertEqual(rc, 2)
        self.assertIn("strata gpu run sets STRATA_GPU_FLUSH_MS itself", self.err)
        rc, out = self.bench("--variant", "no-assignment")
        self.assertEqual(rc, 2)
        self.assertIn("expected NAME:ENV=VALUE", self.err)
        self.assertFalse(os.path.exists(self.log), "nothing may run after a usage error")

    def test_no_gpu_exits_3_and_says_why(self):
        collection_overhead.gpu_absent = lambda: "no driver here (test)"
        rc, out = self.bench()
        self.assertEqual(rc, 3)
        self.assertEqual(out, "no GPU: no driver here (test); no overhead numbers were measured\n")
        self.assertFalse(os.path.exists(self.log), "nothing may run without a GPU")


class TorchTinyOps(unittest.TestCase):
    """torch_tiny_ops.py where torch has no CUDA: exit 3 and the reason, for each Python here
    (this one, and Debian's, which may have a CPU-only torch)."""

    def test_without_cuda_it_exits_3_saying_why(self):
        script = os.path.join(HERE, "torch_tiny_ops.py")
        pythons = [sys.executable] + [p for p in ("/usr/bin/python3",) if os.path.exists(p)]
        tried = 0
        for python in dict.fromkeys(pythons):
            probe = subprocess.run([python, "-c", "import torch; print(torch.cuda.is_available())"],
                                   capture_output=True, text=True)
            if probe.stdout.strip() == "True":
                print(f"SKIPPED: {python} has torch with CUDA: its no-CUDA exit cannot be seen here", flush=True)
                continue
            tried += 1
            done = subprocess.run([python, script, "10"], capture_output=True, text=True, timeout=120)
            with self.subTest(python=python):
                self.assertEqual(done.returncode, 3, done.stdout + done.stderr)
                if probe.returncode != 0:  # no torch at all
                    self.assertRegex(done.stdout, r"^torch_tiny_ops: no CUDA: torch cannot be imported by .*\n$")
                else:
                    self.assertRegex(done.stdout, r"^torch_tiny_ops: no CUDA: torch \S+ \(.*\) sees no CUDA device "
                                                  r"\(torch.cuda.is_available\(\) is False\)\n$")
        if not tried:
            self.skipTest("every Python here has torch with CUDA")


if __name__ == "__main__":
    unittest.main(verbosity=2)
