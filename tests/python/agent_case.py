"""Shared fixture for agent tests: start a debuggee under the agent, drive it, read stops."""
import unittest

from dap_client import AgentProcess, markers, target


class AgentCase(unittest.TestCase):
    def start(self, script, *args, wait=True, env=None, **configure):
        self.path = target(script)
        self.m = markers(self.path)
        self.agent = AgentProcess([self.path, *args], wait=wait, env=env)
        self.addCleanup(self.agent.kill)
        self.c = self.agent.client(**configure)
        self.addCleanup(self.c.close)
        return self.c

    def set_bps(self, *specs, path=None):
        bps = []
        for s in specs:
            if isinstance(s, str):
                s = {"line": self.m[s]}
            elif "at" in s:
                s = dict(s)
                s["line"] = self.m[s.pop("at")]
            bps.append(s)
        return self.c.request("setBreakpoints", source={"path": path or self.path},
                              breakpoints=bps)["breakpoints"]

    def go(self):
        self.c.request("configurationDone")

    def stopped(self, reason=None, timeout=15.0):
        ev = self.c.wait_event("stopped", timeout)
        if reason is not None:
            self.assertEqual(ev["reason"], reason, ev)
        st = self.c.request("stackTrace", threadId=ev["threadId"])
        self.frames = st["stackFrames"]
        self.total_frames = st.get("totalFrames")
        self.tid = ev["threadId"]
        return ev, self.frames[0]

    def locals_(self, frame=None):
        frame = frame or self.frames[0]
        sc = self.c.request("scopes", frameId=frame["id"])["scopes"]
        vs = self.c.request("variables", variablesReference=sc[0]["variablesReference"])["variables"]
        return {v["name"]: v for v in vs}

    def cont(self):
        self.c.request("continue", threadId=self.tid)

    def finish(self):
        return self.agent.finish()


__all__ = ["AgentCase", "unittest"]
