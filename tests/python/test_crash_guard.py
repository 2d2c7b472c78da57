"""The agent's crash guard on its own (strata/_strata_crash.so through strata._crash): a program
armed against a socket here tells it which thread crashed where, waits for its byte, then dies
of its signal as it would have; disarmed, or with nobody listening any more, it dies at once."""
import os
import signal
import socket
import subprocess
import sys
import textwrap
import unittest

from dap_client import agent_pythonpath

CRASH = textwrap.dedent("""
    import ctypes, os, signal, sys, threading
    from strata import _crash
    why = _crash.arm(sys.argv[1], "tok", 0)
    assert why is None, why
    if sys.argv[2] == "disarm":
        _crash.disarm()
    print(threading.get_native_id(), flush=True)
    if sys.argv[2] == "pipe":
        # SIGPIPE at its default (Python ignores it), as a program may have it.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.stdin.readline()
    ctypes.string_at(0x2000, 8)
""")


class CrashGuard(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(os.path.join(agent_pythonpath(), "strata", "_strata_crash.so")):
            self.skipTest("_strata_crash.so is not built beside this agent (the C part of the build)")
        self.server = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(self.server.close)

    def run_crash(self, mode):
        env = dict(os.environ, PYTHONPATH=agent_pythonpath())
        address = f"127.0.0.1:{self.server.getsockname()[1]}"
        return subprocess.Popen([sys.executable, "-c", CRASH, address, mode], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def accept(self):
        self.server.settimeout(20)
        conn, _ = self.server.accept()
        self.addCleanup(conn.close)
        conn.settimeout(20)
        f = conn.makefile("rb")
        self.assertEqual(f.readline(), b"STRATA-TOKEN tok\r\n")
        return conn, f

    def test_the_crash_is_told_and_waits_for_the_answer(self):
        proc = self.run_crash("crash")
        conn, f = self.accept()
        tid = int(proc.stdout.readline())
        words = f.readline().decode().split()
        self.assertEqual(words[0], "STRATA-CRASH")
        self.assertEqual(int(words[1]), signal.SIGSEGV)
        self.assertGreater(int(words[2]), 0, "a fault, not a signal sent")
        self.assertEqual(int(words[3], 16), 0x2000)
        self.assertEqual(int(words[4]), tid)
        # It waits for the answer: still alive.
        with self.assertRaises(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
        conn.sendall(b"g")
        self.assertEqual(proc.wait(timeout=20), -signal.SIGSEGV)

    def test_disarmed_it_dies_at_once_as_without_the_agent(self):
        proc = self.run_crash("disarm")
        conn, f = self.accept()
        self.assertEqual(proc.wait(timeout=20), -signal.SIGSEGV)
        conn.settimeout(5)
        self.assertEqual(f.read(), b"", "nothing was told")

    def test_a_debugger_gone_lets_it_die(self):
        proc = self.run_crash("crash")
        conn, f = self.accept()
        proc.stdout.readline()
        self.assertTrue(f.readline().startswith(b"STRATA-CRASH 11 "))
        f.close()  # the socket closes with its last user
        conn.close()
        self.assertEqual(proc.wait(timeout=20), -signal.SIGSEGV)

    def test_a_debugger_gone_before_the_crash_lets_it_die_at_once_by_its_signal(self):
        proc = self.run_crash("pipe")
        conn, f = self.accept()
        proc.stdout.readline()
        f.close()
        conn.close()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        # Not the guard's 30 s wait for an answer: the closed link says nobody will answer.
        self.assertEqual(proc.wait(timeout=10), -signal.SIGSEGV)


if __name__ == "__main__":
    unittest.main()
