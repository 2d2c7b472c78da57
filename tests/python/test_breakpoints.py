"""End to end: line, conditional, hit-count, log and function breakpoints through the agent."""
from agent_case import AgentCase, unittest
from dap_client import target


class LineBreakpoints(AgentCase):
    def test_verified_moved_and_unverified(self):
        self.start("loop.py")
        bps = self.set_bps("loop_body", "comment", {"line": 999})
        self.assertTrue(bps[0]["verified"])
        self.assertEqual(bps[0]["line"], self.m["loop_body"])
        self.assertTrue(bps[1]["verified"])
        self.assertEqual(bps[1]["line"], self.m["after_loop"])
        self.assertFalse(bps[2]["verified"])
        self.assertIn("no code", bps[2]["message"])
        self.go()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["loop_body"])
        self.assertEqual(ev["hitBreakpointIds"], [bps[0]["id"]])
        self.assertEqual(self.locals_()["i"]["value"], "0")
        self.set_bps("comment")
        self.cont()
        ev, top = self.stopped("breakpoint")
        self.assertEqual(top["line"], self.m["after_loop"])
        self.assertEqual(self.locals_()["total"]["value"], "100")
        self.cont()
        self.c.wait_event("exited")
        rc, out, _ = self.finish()
        self.assertEqual(rc, 0)
        self.assertIn("total 100", out)

    def test_condition_and_errors(self):
        self.start("loop.py")
        bps = self.set_bps({"at": "helper_body", "condition": "x == 7"},
                           {"at": "loop_body", "condition": "i =="})
        self.assertTrue(bps[0]["verified"])
        self.assertFalse(bps[1]["verified"])
        self.assertIn("condition", bps[1]["message"])
        self.go()
        self.stopped("breakpoint")
        self.assertEqual(self.locals_()["x"]["value"], "7")
        self.set_bps({"at": "helper_body", "condition": "undefined_name > 1"})
        self.cont()
        ev, _ = self.stopped("breakpoint")
        out = self.c.wait_event("output", pred=lambda b: "undefined_name" in b.get("output", ""))
        self.assertIn("NameError", out["output"])
        self.set_bps()
        self.cont()
        self.c.wait_event("exited")

    def test_hit_conditions(self):
        for cond, expected in (("5", [4]), ("==3", [2]), (">=8", [7, 8, 9]), (">8", [8, 9]),
                               ("%4", [3, 7])):
            with self.subTest(cond=cond):
                self.start("loop.py")
                self.set_bps({"at": "helper_body", "hitCondition": cond})
                self.go()
                seen = []
                while True:
                    try:
                        ev = self.c.wait_event("stopped", timeout=5)
                    except TimeoutError:
                        break
                    self.tid = ev["threadId"]
                    st = self.c.request("stackTrace", threadId=self.tid)
                    self.frames = st["stackFrames"]
                    seen.append(int(self.locals_()["x"]["value"]))
                    self.cont()
                    if len(seen) > 10:
                        break
                self.assertEqual(seen, expected)
                self.finish()

    def test_logpoints_all_delivered_in_order(self):
        n = 100000
        self.start("logs.py", str(n))
        bps = self.set_bps({"at": "hot", "logMessage": "i={i} acc={acc}"})
        self.assertTrue(bps[0]["verified"])
        self.go()
        self.c.wait_event("exited", timeout=60)
        text = "".join(b["output"] for b in self.c.take_events("output") if b.get("category") == "console")
        outs = text.splitlines()
        self.assertEqual(len(outs), n)
        for i in (0, 1, 2, n // 2, n - 1):
            self.assertEqual(outs[i], f"i={i} acc={sum(range(i))}")
        rc, out, _ = self.finish()
        self.assertEqual(rc, 0)

    def test_logpoint_expression_error_is_reported_inline(self):
        self.start("logs.py", "3")
        self.set_bps({"at": "hot", "logMessage": "v={1 / (i - 1)}"})
        self.go()
        self.c.wait_event("exited")
        outs = "".join(b["output"] for b in self.c.take_events("output")).splitlines()
        self.assertEqual(outs[0], "v=-1.0")
        self.assertIn("ZeroDivisionError", outs[1])
        self.assertEqual(outs[2], "v=1.0")

    def test_log_message_syntax_error(self):
        self.start("logs.py", "3")
        bps = self.set_bps({"at": "hot", "logMessage": "v={i +}"})
        self.assertFalse(bps[0]["verified"])
        self.assertIn("log message", bps[0]["message"])
        self.go()
        self.c.wait_event("exited")


class OneLineLoop(AgentCase):
    def test_every_iteration_of_a_one_line_loop_stops(self):
        self.start("oneline.py")
        self.set_bps("oneline")
        self.go()
        seen = []
        for _ in range(5):
            self.stopped("breakpoint")
            seen.append(self.locals_()["n"]["value"])
            self.cont()
        self.assertEqual(seen, ["0", "1", "2", "3", "4"])
        self.c.wait_event("exited")


class SetWhileStopped(AgentCase):
    def test_breakpoint_set_at_entry_stops_in_a_function_defined_later(self):
        # Stopped before the module's first line: `helper` is not defined yet, its code only a
        # constant of the running module body (on 3.11 the breakpoint is written into it there).
        self.start("loop.py", stopOnEntry=True)
        self.go()
        self.stopped("entry")
        self.set_bps({"at": "helper_body", "condition": "x == 2"})
        self.cont()
        _, top = self.stopped("breakpoint")
        self.assertEqual((top["name"], top["line"]), ("helper", self.m["helper_body"]))
        self.assertEqual(self.locals_()["x"]["value"], "2")
        self.set_bps()
        self.cont()
        self.c.wait_event("exited")


class PendingFiles(AgentCase):
    def test_breakpoint_in_file_created_later_is_verified_when_loaded(self):
        import os
        import tempfile
        folder = tempfile.mkdtemp()
        later = os.path.join(folder, "made_later.py")
        self.start("generated.py", folder)
        bps = self.set_bps({"line": 3}, path=later)
        self.assertFalse(bps[0]["verified"])
        self.assertIn("not found", bps[0]["message"])
        self.go()
        changed = self.c.wait_event("breakpoint")
        self.assertEqual(changed["reason"], "changed")
        self.assertTrue(changed["breakpoint"]["verified"])
        self.assertEqual(changed["breakpoint"]["id"], bps[0]["id"])
        ev, top = self.stopped("breakpoint")
        self.assertEqual((top["source"]["path"], top["line"]), (later, 3))
        self.assertEqual(self.locals_()["value"]["value"], "5")
        self.cont()
        self.c.wait_event("exited")


class KindsOfCode(AgentCase):
    def test_every_kind_of_code(self):
        self.start("features.py")
        late = target("late_module.py")
        names = ["nested", "lambda", "class_body", "comprehension", "method", "generator", "coroutine"]
        self.set_bps(*names)
        from dap_client import markers
        late_line = markers(late)["late"]
        self.c.request("setBreakpoints", source={"path": late}, breakpoints=[{"line": late_line}])
        self.go()
        order = []
        while not order or order[-1] != "late":
            ev, top = self.stopped("breakpoint")
            line = top["line"]
            if top["source"].get("path") == late:
                order.append("late")
            else:
                order.append(next(k for k, v in self.m.items() if v == line))
            self.cont()
        # A comprehension's line runs once per item: collapse the repeats.
        order = [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]
        self.assertEqual(order, ["class_body", "nested", "lambda", "comprehension", "method",
                                 "generator", "coroutine", "late"])
        self.c.wait_event("exited")


class FunctionBreakpoints(AgentCase):
    def test_names_and_condition(self):
        self.start("features.py")
        bps = self.c.request("setFunctionBreakpoints", breakpoints=[
            {"name": "outer"}, {"name": "Shape.area"}, {"name": "late_module.later", "condition": "x == 7"},
            {"name": "not a name"}])["breakpoints"]
        self.assertEqual([b["verified"] for b in bps], [True, True, True, False])
        self.go()
        got = []
        for _ in range(3):
            ev, top = self.stopped("function breakpoint")
            got.append(top["name"])
            self.cont()
        self.assertEqual(got, ["outer", "Shape.area", "later"])
        self.c.wait_event("exited")


if __name__ == "__main__":
    unittest.main()
