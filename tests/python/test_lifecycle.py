"""End to end: disconnect and run on, link drop, fork, exit codes, tracebacks, --connect, strata.listen."""
import os
import socket
import subprocess
import sys
import tempfile
import time

from agent_case import AgentCase, unittest
from dap_client import DapClient, agent_pythonpath, markers, target


class Lifecycle(AgentCase):
    def test_disconnect_runs_on_without_instrumentation(self):
        out = os.path.join(tempfile.mkdtemp(), "result")
        self.start("runon.py", out)
        self.set_bps("work")
        self.go()
        self.stopped("breakpoint")
        self.c.request("disconnect", terminateDebuggee=False)
        rc, _, err = self.finish()
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            self.assertEqual(f.read(), "435 None")

    def test_link_drop_resumes_and_listens_again(self):
        out = os.path.join(tempfile.mkdtemp(), "result")
        self.start("runon.py", out)
        self.set_bps("work")
        self.go()
        self.stopped("breakpoint")
        self.c.sock.shutdown(socket.SHUT_RDWR)
        self.c.close()
        # The agent listens again: a new client gets served while the program runs on.
        c2 = DapClient.connect(self.agent.port, timeout=2)
        self.addCleanup(c2.close)
        caps = c2.request("initialize", adapterID="strata", timeout=2)
        self.assertTrue(caps["supportsConfigurationDoneRequest"])
        # It runs on to its end (finish's timeout is a hang guard; how soon it resumes is
        # bench/python/link_drop.py's to measure).
        rc, _, err = self.finish()
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            self.assertTrue(f.read().startswith("435"))

    def test_forked_child_runs_free(self):
        self.start("forker.py")
        self.set_bps("work")
        self.go()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(self.locals_()["tag"]["value"], "2")
        self.assertEqual(ev["threadId"], self.agent.proc.pid)
        self.cont()
        self.c.wait_event("exited")
        rc, out, _ = self.finish()
        self.assertIn("child exit 7", out)
        self.assertIn("pool [6, 8, 10]", out)
        self.assertEqual(rc, 0)

    def test_bad_input_gets_answers_not_silence(self):
        self.start("loop.py")
        self.c.sock.sendall(b"Content-Length: 5\r\n\r\n{oops")
        r = self.c.request_raw("noSuchRequest")
        self.assertFalse(r["success"])
        self.assertIn("noSuchRequest", r["message"])
        r = self.c.request_raw("stackTrace", threadId=123456789)
        self.assertFalse(r["success"])
        r = self.c.request_raw("variables", variablesReference=999)
        self.assertFalse(r["success"])
        self.go()
        self.c.wait_event("exited")

    def test_program_output_redirected_in_order_with_log_points(self):
        self.start("logs.py", "3", redirectOutput=True)
        self.set_bps({"at": "hot", "logMessage": "log {i}"})
        self.go()
        self.c.wait_event("exited")
        outs = [(b["category"], b["output"]) for b in self.c.take_events("output")]
        text = "".join(o for _, o in outs)
        self.assertEqual(text, "log 0\nlog 1\nlog 2\ndone 3\n")
        self.assertIn(("stdout", "done 3\n"), outs)
        rc, out, _ = self.finish()
        self.assertEqual(out, "done 3\n")

    def test_exit_code_reported(self):
        self.start("loop.py", "exit3")
        self.go()
        self.assertEqual(self.c.wait_event("exited")["exitCode"], 3)
        self.c.wait_event("terminated")
        self.assertEqual(self.finish()[0], 3)

    def test_traceback_and_main_identical_to_plain_run(self):
        path = target("fail_main.py")
        plain = subprocess.run([sys.executable, path, "a", "b"], capture_output=True, text=True)
        self.start("fail_main.py", "a", "b")
        self.go()
        self.c.wait_event("exited")
        rc, out, err = self.finish()
        self.assertEqual(rc, plain.returncode)
        self.assertEqual(out, plain.stdout)
        self.assertEqual(err, plain.stderr)

    def test_agent_dials_the_adapter(self):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        self.addCleanup(srv.close)
        path = target("loop.py")
        m = markers(path)
        env = dict(os.environ, PYTHONPATH=agent_pythonpath())
        proc = subprocess.Popen([sys.executable, "-m", "strata", "--connect",
                                 f"127.0.0.1:{srv.getsockname()[1]}", path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.addCleanup(proc.kill)
        srv.settimeout(10)
        sock, _ = srv.accept()
        c = DapClient(sock)
        self.addCleanup(c.close)
        c.request("initialize", adapterID="strata")
        c.request("setBreakpoints", source={"path": path}, breakpoints=[{"line": m["after_loop"]}])
        c.request("configurationDone")
        ev = c.wait_event("stopped")
        top = c.request("stackTrace", threadId=ev["threadId"])["stackFrames"][0]
        self.assertEqual(top["line"], m["after_loop"])
        c.request("continue", threadId=ev["threadId"])
        c.wait_event("exited")
        proc.communicate(timeout=10)
        self.assertEqual(proc.returncode, 0)

    def test_listen_and_breakpoint_from_user_code(self):
        path = target("api_user.py")
        m = markers(path)
        port_file = os.path.join(tempfile.mkdtemp(), "port")
        env = dict(os.environ, PYTHONPATH=agent_pythonpath())
        proc = subprocess.Popen([sys.executable, path, port_file], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        self.addCleanup(proc.kill)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(port_file) as f:
            port = int(f.read())
        c = DapClient.connect(port)
        self.addCleanup(c.close)
        c.request("initialize", adapterID="strata")
        c.request("configurationDone")
        ev = c.wait_event("stopped")
        self.assertEqual(ev["reason"], "pause")
        top = c.request("stackTrace", threadId=ev["threadId"])["stackFrames"][0]
        self.assertEqual(top["line"], m["api_break"])
        c.request("setExpression", expression="value", value="100", frameId=top["id"])
        c.request("next", threadId=ev["threadId"])
        ev = c.wait_event("stopped")
        self.assertEqual(ev["reason"], "step")
        top = c.request("stackTrace", threadId=ev["threadId"])["stackFrames"][0]
        self.assertEqual(top["line"], m["api_next"])
        c.request("continue", threadId=ev["threadId"])
        out, _ = proc.communicate(timeout=10)
        self.assertIn(b"value 101", out)

    def test_token_guards_the_listener(self):
        port_file = os.path.join(tempfile.mkdtemp(), "port")
        env = dict(os.environ, PYTHONPATH=agent_pythonpath(), STRATA_TOKEN="tok-1")
        proc = subprocess.Popen([sys.executable, "-m", "strata", "--listen", "127.0.0.1:0", "--port-file",
                                 port_file, "--wait-for-client", target("loop.py")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.addCleanup(proc.kill)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(port_file) as f:
            port = int(f.read())
        # No token line: closed before a request is answered.
        bad = DapClient.connect(port)
        self.addCleanup(bad.close)
        with self.assertRaises(Exception):
            bad.request("initialize", adapterID="strata", timeout=3)
        wrong = socket.create_connection(("127.0.0.1", port))
        self.addCleanup(wrong.close)
        wrong.sendall(b"STRATA-TOKEN tok-2\r\n")
        wrong.settimeout(5)
        self.assertEqual(wrong.recv(100), b"")
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"STRATA-TOKEN tok-1\r\n")
        c = DapClient(sock)
        self.addCleanup(c.close)
        self.assertTrue(c.request("initialize", adapterID="strata")["supportsConfigurationDoneRequest"])
        c.request("configurationDone")
        c.wait_event("exited")
        self.assertEqual(proc.communicate(timeout=10)[0], b"total 100\n")

    def test_non_loopback_needs_a_token(self):
        env = dict(os.environ, PYTHONPATH=agent_pythonpath())
        env.pop("STRATA_TOKEN", None)
        for opt in ("--listen", "--connect"):
            r = subprocess.run([sys.executable, "-m", "strata", opt, "0.0.0.0:0" if opt == "--listen" else "192.0.2.1:9",
                                target("loop.py")], capture_output=True, text=True, env=env, timeout=20)
            self.assertEqual(r.returncode, 1)
            self.assertIn("(not a loopback address) requires a token", r.stderr)
            self.assertEqual(r.stdout, "")

    def test_agent_dials_with_its_token(self):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        self.addCleanup(srv.close)
        env = dict(os.environ, PYTHONPATH=agent_pythonpath())
        proc = subprocess.Popen([sys.executable, "-m", "strata", "--connect", f"127.0.0.1:{srv.getsockname()[1]}",
                                 "--token", "abc", target("loop.py")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.addCleanup(proc.kill)
        srv.settimeout(10)
        sock, _ = srv.accept()
        line = b""
        while not line.endswith(b"\n"):
            line += sock.recv(1)
        self.assertEqual(line, b"STRATA-TOKEN abc\r\n")
        c = DapClient(sock)
        self.addCleanup(c.close)
        c.request("initialize", adapterID="strata")
        c.request("configurationDone")
        c.wait_event("exited")
        self.assertEqual(proc.communicate(timeout=10)[0], b"total 100\n")


if __name__ == "__main__":
    unittest.main()
