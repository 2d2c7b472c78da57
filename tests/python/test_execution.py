"""End to end: stepping, entry stops, pause of busy and sleeping threads, thread names, exceptions."""
from agent_case import AgentCase, unittest
from dap_client import target


class Stepping(AgentCase):
    def test_next_in_out(self):
        self.start("loop.py")
        self.set_bps("loop_body")
        self.go()
        self.stopped("breakpoint")
        self.set_bps()
        self.c.request("stepIn", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual((top["name"], top["line"]), ("helper", self.m["helper_body"]))
        self.c.request("next", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["line"], self.m["helper_return"])
        self.c.request("stepOut", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["name"], "main")
        self.assertEqual(top["line"], self.m["loop_body"])
        self.assertEqual(self.locals_()["total"]["value"], "0")
        self.c.request("next", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["line"], self.m["loop_body"] - 1)
        self.assertEqual(self.locals_()["total"]["value"], "1")
        self.c.request("next", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["line"], self.m["loop_body"])
        self.assertEqual(self.locals_()["i"]["value"], "1")
        self.cont()
        self.c.wait_event("exited")

    def test_step_in_skips_library_code(self):
        self.start("exc.py")
        self.set_bps("raise_value")
        self.go()
        self.stopped("breakpoint")
        self.set_bps()
        self.c.request("stepOut", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["name"], "main")
        # inspect.getmembers is library code: stepping in lands in the user property it calls.
        self.c.request("next", threadId=self.tid)
        self.stopped("step")
        self.c.request("stepIn", threadId=self.tid)
        _, top = self.stopped("step")
        self.assertEqual(top["name"], "Tricky.boom")
        self.cont()
        self.c.wait_event("exited")

    def test_stop_on_entry(self):
        self.start("loop.py", stopOnEntry=True)
        self.go()
        ev, top = self.stopped("entry")
        self.assertEqual(top["line"], 1)
        self.assertEqual(top["name"], "<module>")
        self.cont()
        self.c.wait_event("exited")


class Threads(AgentCase):
    def test_pause_busy_and_sleeping_threads(self):
        self.start("threads_busy.py")
        self.go()
        self.agent.proc.stdout.readline()
        threads = {t["name"]: t["id"] for t in self.c.request("threads")["threads"]}
        self.assertIn("busy-worker", threads)
        self.assertIn("sleepy-worker", threads)
        self.assertIn("MainThread", threads)
        self.assertFalse(any(n.startswith("strata.") for n in threads))
        self.c.request("pause", threadId=threads["busy-worker"])
        ev = self.c.wait_event("stopped")
        self.assertEqual(ev["reason"], "pause")
        self.assertTrue(ev["allThreadsStopped"])
        # Every thread shows a stack, including one that sleeps in C right now.
        for name in ("busy-worker", "sleepy-worker", "MainThread"):
            st = self.c.request("stackTrace", threadId=threads[name])
            self.assertTrue(st["stackFrames"], name)
        busy = self.c.request("stackTrace", threadId=threads["busy-worker"])["stackFrames"][0]
        self.assertEqual(busy["line"], self.m["busy"])
        sleepy = self.c.request("stackTrace", threadId=threads["sleepy-worker"])["stackFrames"][0]
        self.assertEqual(sleepy["name"], "sleeper")
        # The busy loop is parked: its counter does not move while stopped.
        frame = busy["id"]
        n1 = self.c.request("evaluate", expression="n", frameId=frame, context="watch")["result"]
        import time
        time.sleep(0.2)
        n2 = self.c.request("evaluate", expression="n", frameId=frame, context="watch")["result"]
        self.assertEqual(n1, n2)
        self.c.request("evaluate", expression="globals().__setitem__('stop', True)", frameId=frame,
                       context="repl")
        self.c.request("continue", threadId=ev["threadId"])
        self.c.wait_event("exited")
        exits = [b for b in self.c.take_events("thread") if b["reason"] == "exited"]
        self.assertTrue({"busy-worker", "sleepy-worker"} <= {b.get("name") for b in exits})

    def test_pause_sleeping_main_stops_when_it_runs_python(self):
        self.start("threads_busy.py")
        self.go()
        self.agent.proc.stdout.readline()
        main = [t["id"] for t in self.c.request("threads")["threads"] if t["name"] == "MainThread"][0]
        self.c.request("pause", threadId=main)
        ev = self.c.wait_event("stopped")
        self.assertEqual(ev["reason"], "pause")
        st = self.c.request("stackTrace", threadId=main)
        self.assertTrue(st["stackFrames"])
        self.c.request("evaluate", expression="globals().__setitem__('stop', True)",
                       frameId=st["stackFrames"][0]["id"], context="repl")
        self.c.request("continue", threadId=ev["threadId"])
        self.c.wait_event("exited")

    def test_single_thread_continue_keeps_others_parked(self):
        self.start("threads_busy.py")
        self.set_bps("main_wait")
        self.go()
        ev, _ = self.stopped("breakpoint")
        main = ev["threadId"]
        self.set_bps()
        threads = {t["name"]: t["id"] for t in self.c.request("threads")["threads"]}
        # Other threads park at their next line, a moment after the stopped event.
        import time
        time.sleep(0.1)
        busy = self.c.request("stackTrace", threadId=threads["busy-worker"])["stackFrames"][0]
        before = self.c.request("evaluate", expression="n", frameId=busy["id"], context="watch")["result"]
        body = self.c.request("next", threadId=main, singleThread=True)
        self.stopped("step")
        busy = self.c.request("stackTrace", threadId=threads["busy-worker"])["stackFrames"][0]
        after = self.c.request("evaluate", expression="n", frameId=busy["id"], context="watch")["result"]
        self.assertEqual(before, after)
        self.c.request("evaluate", expression="globals().__setitem__('stop', True)",
                       frameId=self.frames[0]["id"], context="repl")
        self.cont()
        self.c.wait_event("exited")
        del body


    def test_single_thread_continue_of_a_thread_still_in_c(self):
        import time
        self.start("threads_busy.py")
        self.go()
        self.agent.proc.stdout.readline()
        threads = {t["name"]: t["id"] for t in self.c.request("threads")["threads"]}
        self.c.request("pause", threadId=threads["busy-worker"])
        ev = self.c.wait_event("stopped")
        # At once: the sleeping worker has likely not run a line since the pause, so it has
        # no state yet; running it alone must still leave the others stopped.
        r = self.c.request("continue", threadId=threads["sleepy-worker"], singleThread=True)
        self.assertFalse(r["allThreadsContinued"])

        def busy_n():
            top = self.c.request("stackTrace", threadId=threads["busy-worker"])["stackFrames"][0]
            return self.c.request("evaluate", expression="n", frameId=top["id"], context="watch")["result"]
        deadline = time.monotonic() + 10
        while True:
            a = busy_n()
            time.sleep(0.2)
            n1 = busy_n()
            if a == n1 or time.monotonic() > deadline:
                break
        self.assertEqual(a, n1)
        time.sleep(0.5)
        self.assertEqual(busy_n(), n1)
        top = self.c.request("stackTrace", threadId=threads["busy-worker"])["stackFrames"][0]
        self.c.request("evaluate", expression="globals().__setitem__('stop', True)", frameId=top["id"],
                       context="repl")
        self.c.request("continue", threadId=ev["threadId"])
        self.c.wait_event("exited")


class ConcurrentStops(AgentCase):
    def test_each_thread_reports_its_own_stop(self):
        self.start("two_threads.py")
        self.set_bps("shared")
        self.go()
        seen = {}
        for _ in range(2):
            ev, top = self.stopped("breakpoint")
            self.assertEqual(top["line"], self.m["shared"])
            names = {t["id"]: t["name"] for t in self.c.request("threads")["threads"]}
            seen[names[ev["threadId"]]] = self.locals_()["tag"]["value"]
            self.cont()
        self.assertEqual(seen, {"worker-1": "1", "worker-2": "2"})
        self.c.wait_event("exited")
        self.assertIn("both done", self.finish()[1])


class StopsImportNothing(AgentCase):
    """A stop must not import modules the program did not (linecache alone costs 8-15 ms)."""

    def loaded(self, name):
        fid = self.frames[0]["id"]
        r = self.c.request("evaluate", expression=f"{name!r} in __import__('sys').modules",
                           frameId=fid, context="watch")
        return r["result"]

    def test_line_and_exception_stops(self):
        self.start("bare.py", "raise")
        self.set_bps("loop")
        self.c.request("setExceptionBreakpoints", filters=["uncaught"])
        self.go()
        self.stopped("breakpoint")
        self.assertEqual(self.loaded("linecache"), "False")
        self.assertEqual(self.locals_()["i"]["value"], "0")
        self.set_bps()
        self.cont()
        ev, top = self.stopped("exception")
        self.assertEqual(top["line"], self.m["raise"])
        self.assertEqual(self.loaded("linecache"), "False")
        self.assertEqual(self.loaded("traceback"), "False")
        trace = self.c.request("exceptionInfo", threadId=self.tid)["details"]["stackTrace"]
        path = target("bare.py")
        self.assertEqual(trace, "Traceback (most recent call last):\n"
                         f'  File "{path}", line {self.m["main_call"]}, in <module>\n'
                         "    main()  # @bp:main_call\n"
                         f'  File "{path}", line {self.m["explode_call"]}, in main\n'
                         "    explode(total)  # @bp:explode_call\n"
                         f'  File "{path}", line {self.m["raise"]}, in explode\n'
                         '    raise ValueError(f"bare {n}")  # @bp:raise\n'
                         "ValueError: bare 3\n")
        self.cont()
        self.c.wait_event("exited")
        self.assertIn("ValueError: bare 3", self.finish()[2])


class Exceptions(AgentCase):
    def test_raised_with_type_condition(self):
        self.start("exc.py")
        r = self.c.request("setExceptionBreakpoints", filters=[],
                           filterOptions=[{"filterId": "raised", "condition": "ValueError"}])
        self.assertTrue(r["breakpoints"][0]["verified"])
        self.go()
        ev, top = self.stopped("exception")
        self.assertEqual(top["line"], self.m["raise_value"])
        info = self.c.request("exceptionInfo", threadId=self.tid)
        self.assertEqual(info["exceptionId"], "ValueError")
        self.assertEqual(info["breakMode"], "always")
        self.assertIn("invalid literal", info["description"])
        self.assertIn("Traceback (most recent call last)", info["details"]["stackTrace"])
        self.cont()
        self.c.wait_event("exited")

    def test_uncaught_stops_at_raise_site_with_frames(self):
        self.start("exc.py", "raise")
        self.c.request("setExceptionBreakpoints", filters=["uncaught"])
        self.go()
        ev, top = self.stopped("exception")
        self.assertEqual(top["line"], self.m["uncaught"])
        self.assertEqual([f["name"] for f in self.frames[:4]], ["fail", "fail", "fail", "fail"])
        self.assertEqual(self.locals_()["x"]["value"], "3")
        info = self.c.request("exceptionInfo", threadId=self.tid)
        self.assertEqual(info["breakMode"], "unhandled")
        self.assertEqual(info["description"], "bad 3")
        trace = info["details"]["stackTrace"]
        self.assertEqual(trace.count("in fail"), 4)
        self.assertNotIn("strata", trace)
        self.assertTrue(trace.rstrip().endswith("RuntimeError: bad 3"))
        self.cont()
        self.c.wait_event("exited")
        rc, _, err = self.finish()
        self.assertEqual(rc, 1)
        self.assertIn("RuntimeError: bad 3", err)

    def test_user_unhandled(self):
        self.start("exc.py")
        self.c.request("setExceptionBreakpoints", filters=["userUnhandled"])
        self.go()
        ev, top = self.stopped("exception")
        self.assertEqual(top["line"], self.m["user_unhandled"])
        self.assertEqual(self.c.request("exceptionInfo", threadId=self.tid)["breakMode"], "userUnhandled")
        self.cont()
        self.c.wait_event("exited")

    def test_bad_filter_condition(self):
        self.start("exc.py")
        r = self.c.request("setExceptionBreakpoints", filters=[],
                           filterOptions=[{"filterId": "raised", "condition": "not a type!"}])
        self.assertFalse(r["breakpoints"][0]["verified"])
        self.go()
        self.c.wait_event("exited")


if __name__ == "__main__":
    unittest.main()
