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

    def watch(self, expression):
        return self.c.request("evaluate", expression=expression, frameId=self.frame, context="watch")["result"]

    def test_sequential_counts_its_layers_parameters(self):
        seq = self.vars["seq"]
        self.assertEqual(seq["value"], "Sequential(parameters=161 in 4 tensors (0 direct), buffers=0, children=3)")
        self.assertEqual(self.watch("sum(p.numel() for p in seq.parameters())"), "161")
        groups = {g["name"]: g for g in self.children(seq)}
        self.assertEqual(groups["parameters"]["indexedVariables"], 4)
        params = self.children(groups["parameters"])
        self.assertEqual([p["name"] for p in params], ["0.weight", "0.bias", "2.weight", "2.bias"])
        self.assertEqual(params[0]["value"],
                         "Parameter(shape=(16, 8), dtype=torch.float32, device=cpu, requires_grad=True)")
        self.assertEqual(params[3]["evaluateName"], "getattr(seq, '2').bias")
        self.assertEqual(self.watch(params[3]["evaluateName"]),
                         "Parameter(shape=(1,), dtype=torch.float32, device=cpu, requires_grad=True)")
        self.assertEqual((groups["buffers"]["value"], groups["buffers"]["variablesReference"]), ("0", 0))
        layers = self.children(groups["children"])
        self.assertEqual([(m["name"], m["value"]) for m in layers],
                         [("0", "Linear(parameters=144 in 2 tensors, buffers=0, children=0)"),
                          ("1", "ReLU(parameters=0, buffers=0, children=0)"),
                          ("2", "Linear(parameters=17 in 2 tensors, buffers=0, children=0)")])
        self.assertEqual(self.watch("list(READS)"), "[]")

    def test_nested_module_counts_recursively_with_buffers(self):
        tower = self.vars["tower"]
        self.assertEqual(tower["value"], "Tower(parameters=168 in 7 tensors (1 direct), "
                                         "buffers=3 in 3 tensors (0 direct), children=3)")
        groups = {g["name"]: g for g in self.children(tower)}
        names = [p["name"] for p in self.children(groups["parameters"])]
        self.assertEqual(names, ["embed", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias",
                                 "norm.weight", "norm.bias"])
        self.assertEqual(self.watch("[n for n, _ in tower.named_parameters()]"), repr(names))
        self.assertEqual(self.watch("sum(p.numel() for p in tower.parameters())"), "168")
        page = self.children(groups["parameters"], filter="indexed", start=5, count=2)
        self.assertEqual([p["name"] for p in page], ["norm.weight", "norm.bias"])
        buffers = {b["name"]: b["value"] for b in self.children(groups["buffers"])}
        self.assertEqual(list(buffers), ["norm.running_mean", "norm.running_var", "norm.num_batches_tracked"])
        self.assertEqual(buffers["norm.num_batches_tracked"],
                         "Tensor(shape=(), dtype=torch.int64, device=cpu, requires_grad=False)")
        self.assertEqual(self.watch("[n for n, _ in tower.named_buffers()]"), repr(list(buffers)))
        kids = {m["name"]: m["value"] for m in self.children(groups["children"])}
        self.assertEqual(kids, {
            "body": "Sequential(parameters=161 in 4 tensors (0 direct), buffers=0, children=3)",
            "norm": "BatchNorm1d(parameters=2 in 2 tensors, buffers=3 in 3 tensors, children=0)",
            "first": "Linear(parameters=144 in 2 tensors, buffers=0, children=0)"})
        self.assertEqual(self.watch("list(READS)"), "[]")

    def tearDown(self):
        self.c.request("continue", threadId=self.tid)
        rc, out, err = self.agent.finish()
        self.assertEqual(rc, 0, err)
        self.assertIn("step done 0", out)


if __name__ == "__main__":
    unittest.main()
