"""Real PyTorch tensors and modules in the Variables view: Debian's python3-torch (1.13) under
Debian's own Python 3.11 (/usr/bin/python3), which tests/targets/python/torch_step.py runs."""
import os
import subprocess
import sys

from agent_case import AgentCase, unittest
from dap_client import AgentProcess, markers, target

SYSTEM_PYTHON = "/usr/bin/python3"


def _torch_python():
    """Why the real-torch cases cannot run here, or None."""
    if sys.version_info[:2] != (3, 11):
        return "run once, by the 3.11 suite (Debian's torch is for its Python 3.11)"
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return f"{SYSTEM_PYTHON} is missing"
    r = subprocess.run([SYSTEM_PYTHON, "-c", "import torch"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"torch does not import under {SYSTEM_PYTHON} (python3-torch, which scripts/setup.sh installs)"
    return None


WHY_NOT = _torch_python()


@unittest.skipIf(WHY_NOT is not None, WHY_NOT)
class RealTorch(AgentCase):
    def setUp(self):
        self.path = target("torch_step.py")
        self.m = markers(self.path)
        self.agent = AgentProcess([self.path], python=SYSTEM_PYTHON)
        self.addCleanup(self.agent.kill)
        self.c = self.agent.client()
        self.addCleanup(self.c.close)
        self.set_bps("after_step")
        self.go()
        self.stopped("breakpoint", timeout=60)
        self.frame = self.frames[0]["id"]
        self.vars = self.locals_()

    def children(self, var, **kw):
        return self.c.request("variables", variablesReference=var["variablesReference"], **kw)["variables"]

    def test_tensors_show_shape_dtype_device_grad_and_read_no_data(self):
        x, ids, loss = self.vars["x"], self.vars["ids"], self.vars["loss"]
        self.assertEqual(x["value"], "Tensor(shape=(16, 3), dtype=torch.float32, device=cpu, requires_grad=False)")
        self.assertEqual(ids["value"], "Tensor(shape=(6,), dtype=torch.int64, device=cpu, requires_grad=False)")
        self.assertEqual(loss["value"], "Tensor(shape=(), dtype=torch.float32, device=cpu, requires_grad=True)")
        self.assertEqual(x["indexedVariables"], 16)
        rows = self.children(x, filter="indexed", start=2, count=3)
        self.assertEqual([r["name"] for r in rows], ["[2]", "[3]", "[4]"])
        self.assertIn("shape=(3,)", rows[0]["value"])
        named = {v["name"]: v["value"] for v in self.children(x, filter="named")}
        self.assertEqual(named["dtype"], "torch.float32")
        reads = self.c.request("evaluate", expression="list(READS)", frameId=self.frame, context="watch")["result"]
        self.assertEqual(reads, "[]")

    def test_module_groups_parameters_with_grads(self):
        net = self.vars["net"]
        self.assertEqual(net["value"], "Net(parameters=41 in 4 tensors (0 direct), buffers=1 in 1 tensor, children=2)")
        groups = {g["name"]: g for g in self.children(net)}
        self.assertEqual(list(groups), ["parameters", "buffers", "children"])
        modules = {m["name"]: m for m in self.children(groups["children"])}
        self.assertEqual(modules["hidden"]["value"], "Linear(parameters=32 in 2 tensors, buffers=0, children=0)")
        self.assertEqual(modules["hidden"]["evaluateName"], "net.hidden")
        hidden = {g["name"]: g for g in self.children(modules["hidden"])}
        params = {p["name"]: p["value"] for p in self.children(hidden["parameters"])}
        self.assertEqual(params["weight"],
                         "Parameter(shape=(8, 3), dtype=torch.float32, device=cpu, requires_grad=True)")
        buffers = {b["name"]: b["value"] for b in self.children(groups["buffers"])}
        self.assertIn("shape=(1,)", buffers["scale"])
        grad = self.c.request("evaluate", expression="net.hidden.weight.grad", frameId=self.frame,
                              context="watch")["result"]
        self.assertEqual(grad, "Tensor(shape=(8, 3), dtype=torch.float32, device=cpu, requires_grad=False)")
        reads = self.c.request("evaluate", expression="list(READS)", frameId=self.frame, context="watch")["result"]
        self.assertEqual(reads, "[]")

    def tearDown(self):
        self.c.request("continue", threadId=self.tid)
        rc, out, err = self.agent.finish()
        self.assertEqual(rc, 0, err)
        self.assertIn("step done 0", out)


if __name__ == "__main__":
    unittest.main()
