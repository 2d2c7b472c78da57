"""End to end: -m and -c launches, source requests for code without a file, a taken tool id."""
import os
import subprocess
import sys
import tempfile
import time

from agent_case import AgentCase, unittest
from dap_client import AgentProcess, DapClient, TARGETS, agent_pythonpath, markers, target


class Launch(AgentCase):
    def test_module_run_as_main(self):
        path = os.path.join(TARGETS, "pkg_demo", "__main__.py")
        m = markers(path)
        self.agent = AgentProcess(["-m", "pkg_demo", "x"], cwd=TARGETS)
        self.addCleanup(self.agent.kill)
        self.c = self.agent.client()
        self.c.request("setBreakpoints", source={"path": path}, breakpoints=[{"line": m["module_main"]}])
        self.go()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["name"], "report")
        self.assertEqual(self.frames[-1]["name"], "<module>")
        self.cont()
        rc, out, err = self.finish()
        self.assertEqual(rc, 0, err)
        self.assertIn("module __main__ ['x']", out)

    def test_code_string_and_source_request(self):
        code = "import sys\nx = 1\ny = x + 1\nprint('code', y, sys.argv[1:])\n"
        self.agent = AgentProcess(["-c", code, "arg"])
        self.addCleanup(self.agent.kill)
        self.c = self.agent.client(stopOnEntry=True)
        self.go()
        ev, top = self.stopped("entry")
        self.assertEqual(top["source"]["name"], "<string>")
        ref = top["source"]["sourceReference"]
        self.assertEqual(self.c.request("source", sourceReference=ref)["content"], code)
        bps = self.c.request("setBreakpoints", source={"name": "<string>", "sourceReference": ref},
                             breakpoints=[{"line": 3}])["breakpoints"]
        self.assertTrue(bps[0]["verified"])
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], 3)
        self.cont()
        rc, out, _ = self.finish()
        self.assertIn("code 2 ['arg']", out)

    def test_tool_id_taken_is_reported(self):
        port_file = os.path.join(tempfile.mkdtemp(), "port")
        proc = subprocess.Popen([sys.executable, target("tool_taken.py"), port_file], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=agent_pythonpath()))
        self.addCleanup(proc.kill)
        deadline = time.monotonic() + 10
        while not os.path.exists(port_file) and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(port_file) as f:
            c = DapClient.connect(int(f.read()))
        self.addCleanup(c.close)
        out = c.wait_event("output")
        self.assertRegex(out["output"], "other.debugger")
        out, _ = proc.communicate(timeout=10)
        self.assertIn(b"still running", out)


if __name__ == "__main__":
    unittest.main()
