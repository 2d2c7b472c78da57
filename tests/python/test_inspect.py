"""End to end: variables paging, summaries without data access, guarded reprs, evaluate and edits."""
from agent_case import AgentCase, unittest


class Inspection(AgentCase):
    def setUp(self):
        self.start("inspect_me.py")
        self.set_bps("inspect")
        self.go()
        self.stopped("breakpoint")
        self.vars = self.locals_()
        self.frame = self.frames[0]["id"]

    def tearDown(self):
        if self.agent.proc.poll() is None and not self.c.closed:
            self.set_bps()
            self.cont()
            self.c.wait_event("exited")

    def children(self, var, **kw):
        return self.c.request("variables", variablesReference=var["variablesReference"], **kw)["variables"]

    def test_big_list_pages(self):
        big = self.vars["big"]
        self.assertEqual(big["indexedVariables"], 100000)
        self.assertIn("length 100000", big["value"])
        page = self.children(big, filter="indexed", start=50000, count=100)
        self.assertEqual(len(page), 100)
        self.assertEqual(page[0]["name"], "[50000]")
        self.assertEqual(page[-1]["value"], "50099")
        self.assertEqual(page[3]["evaluateName"], "big[50003]")

    def test_containers(self):
        d = self.children(self.vars["d"], start=10, count=2, filter="indexed")
        self.assertEqual([(v["name"], v["value"]) for v in d], [("'k10'", "10"), ("'k11'", "11")])
        self.assertEqual(self.vars["s"]["indexedVariables"], 3)
        self.assertEqual(self.vars["dq"]["indexedVariables"], 3)
        self.assertEqual([v["value"] for v in self.children(self.vars["dq"])], ["1", "2", "3"])
        text = self.vars["text"]
        self.assertIn("length 3000", text["value"])
        self.assertEqual(text["indexedVariables"], 3000)
        self.assertEqual(self.vars["raw"]["indexedVariables"], 20)

    def test_object_attributes_and_class_attributes(self):
        kids = self.children(self.vars["pt"])
        names = [k["name"] for k in kids]
        self.assertEqual(names[:2], ["x", "y"])
        group = [k for k in kids if k["name"] == "class attributes"][0]
        self.assertEqual([(k["name"], k["value"]) for k in self.children(group)], [("dims", "2")])

    def test_tensor_summary_reads_no_data(self):
        t = self.vars["tensor"]
        self.assertIn("shape=(1000, 1000, 3)", t["value"])
        self.assertIn("device=cuda:0", t["value"])
        self.assertEqual(t["indexedVariables"], 1000)
        rows = self.children(t, filter="indexed", start=10, count=5)
        self.assertEqual(len(rows), 5)
        self.assertIn("shape=(1000, 3)", rows[0]["value"])
        named = {v["name"]: v["value"] for v in self.children(t, filter="named")}
        self.assertIn("dtype", named)
        net = self.vars["net"]
        self.assertEqual(net["value"], "FakeModule(parameters=16 in 2 tensors, buffers=4 in 1 tensor, children=0)")
        groups = {g["name"]: g for g in self.children(net)}
        self.assertEqual(set(groups), {"parameters", "buffers", "children"})
        params = {p["name"]: p["value"] for p in self.children(groups["parameters"])}
        self.assertIn("shape=(4, 3)", params["weight"])
        reads = self.c.request("evaluate", expression="list(FakeTensor.data_reads)", frameId=self.frame,
                               context="watch")["result"]
        self.assertEqual(reads, "[]")

    def test_module_members_count_recursively_and_page(self):
        stack = self.vars["stack"]
        self.assertEqual(stack["value"], "FakeStack(parameters=9601 in 1201 tensors (1 direct), "
                                         "buffers=2400 in 600 tensors (0 direct), children=600)")
        groups = {g["name"]: g for g in self.children(stack)}
        self.assertEqual(list(groups), ["parameters", "buffers", "children"])
        params = groups["parameters"]
        self.assertEqual(params["value"], "9601 in 1201 tensors (1 direct)")
        self.assertEqual(params["indexedVariables"], 1201)
        first = self.children(params)
        self.assertEqual(len(first), 1000)  # a client that does not page gets the first 1000
        self.assertEqual([p["name"] for p in first[:3]], ["scale", "0.weight", "0.bias"])
        self.assertEqual(first[1]["evaluateName"], "getattr(stack, '0').weight")
        last = self.children(params, filter="indexed", start=1199, count=5)
        self.assertEqual([(p["name"], p["value"]) for p in last],
                         [("599.weight", "FakeTensor(shape=(4, 3), dtype=torch.float32, device=cuda:0, requires_grad=False)"),
                          ("599.bias", "FakeTensor(shape=(4,), dtype=torch.float32, device=cuda:0, requires_grad=False)")])
        self.assertEqual(self.children(params, filter="named"), [])
        buffers = self.children(groups["buffers"], filter="indexed", start=0, count=2)
        self.assertEqual([b["name"] for b in buffers], ["0.running_mean", "1.running_mean"])
        children = groups["children"]
        self.assertEqual((children["value"], children["indexedVariables"]), ("600 modules", 600))
        kids = self.children(children, filter="indexed", start=598, count=10)
        self.assertEqual([(k["name"], k["value"]) for k in kids],
                         [("598", "FakeModule(parameters=16 in 2 tensors, buffers=4 in 1 tensor, children=0)"),
                          ("599", "FakeModule(parameters=16 in 2 tensors, buffers=4 in 1 tensor, children=0)")])
        leaf = {g["name"]: g for g in self.children(kids[0])}
        self.assertEqual((leaf["children"]["value"], leaf["children"]["variablesReference"]), ("0 modules", 0))
        reads = self.c.request("evaluate", expression="list(FakeTensor.data_reads)", frameId=self.frame,
                               context="watch")["result"]
        self.assertEqual(reads, "[]")

    def test_bad_and_slow_reprs(self):
        self.assertIn("ValueError: no repr for you", self.vars["bad"]["value"])
        self.assertIn("took longer than", self.vars["slow"]["value"])

    def test_evaluate_contexts(self):
        r = self.c.request("evaluate", expression="counter * 2", frameId=self.frame, context="hover")
        self.assertEqual(r["result"], "20")
        r = self.c.request("evaluate", expression="big", frameId=self.frame, context="watch")
        self.assertEqual(r["indexedVariables"], 100000)
        r = self.c.request("evaluate", expression="text", frameId=self.frame, context="clipboard")
        self.assertEqual(len(r["result"]), 3002)
        err = self.c.request_raw("evaluate", expression="nope + 1", frameId=self.frame, context="watch")
        self.assertFalse(err["success"])
        self.assertIn("NameError", err["message"])
        self.c.request("evaluate", expression="counter = 41\ncounter += 1", frameId=self.frame, context="repl")
        r = self.c.request("evaluate", expression="counter", frameId=self.frame, context="watch")
        self.assertEqual(r["result"], "42")

    def test_endless_evaluation_is_interrupted(self):
        r = self.c.request_raw("evaluate", expression="sum(1 for _ in iter(int, 1))", frameId=self.frame,
                               context="hover", timeout=20)
        self.assertFalse(r["success"])
        self.assertIn("stopped after", r["message"])
        r = self.c.request("evaluate", expression="counter + 1", frameId=self.frame, context="hover")
        self.assertEqual(r["result"], "11")

    def test_set_variable_and_expression_reach_the_program(self):
        sc = self.c.request("scopes", frameId=self.frame)["scopes"]
        r = self.c.request("setVariable", variablesReference=sc[0]["variablesReference"], name="counter",
                           value="7 * 6")
        self.assertEqual(r["value"], "42")
        r = self.c.request("setExpression", expression="pt.x", value="99", frameId=self.frame)
        self.assertEqual(r["value"], "99")
        dq = self.vars["dq"]
        self.c.request("setVariable", variablesReference=dq["variablesReference"], name="[0]", value="5")
        self.c.request("next", threadId=self.tid)
        self.stopped("step")
        v = self.locals_()
        self.assertEqual(v["counter"]["value"], "42")
        self.assertEqual(self.c.request("evaluate", expression="(pt.x, dq[0])", frameId=self.frames[0]["id"],
                                        context="watch")["result"], "(99, 5)")
        self.set_bps()
        self.cont()
        rc, out, _ = self.finish()
        self.assertIn("counter is 42", out)

    def test_completions(self):
        t = self.c.request("completions", text="pt.", column=4, frameId=self.frame)["targets"]
        labels = {x["label"] for x in t}
        self.assertTrue({"x", "y", "dims"} <= labels)
        t = self.c.request("completions", text="cou", column=4, frameId=self.frame)["targets"]
        self.assertIn("counter", [x["label"] for x in t])

    def test_scopes_and_frames(self):
        st = self.c.request("stackTrace", threadId=self.tid, startFrame=1, levels=1)
        self.assertEqual(len(st["stackFrames"]), 1)
        self.assertEqual(st["stackFrames"][0]["name"], "<module>")
        self.assertEqual(st["totalFrames"], 2)  # no runner or runpy frames
        sc = self.c.request("scopes", frameId=self.frame)["scopes"]
        self.assertEqual([s["name"] for s in sc], ["Locals", "Globals"])
        g = self.c.request("variables", variablesReference=sc[1]["variablesReference"])["variables"]
        self.assertIn("Point", [v["name"] for v in g])


if __name__ == "__main__":
    unittest.main()
