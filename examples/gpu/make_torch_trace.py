"""Writes the small, real torch.profiler trace the demo opens with `strata gpu`
(examples/gpu/torch_cpu_trace.json.gz): a few training steps of a tiny MLP, profiled by
torch.profiler and saved with export_chrome_trace.

    /usr/bin/python3 examples/gpu/make_torch_trace.py [OUT.json.gz]

Made with Debian 12's CPU build of PyTorch (python3-torch 1.13, /usr/bin/python3): that torch
has no CUDA (and no Kineto), so the trace holds the CPU operators only (aten::linear,
aten::addmm, autograd's backward ops, the optimizer's ops, one `train_step` range per step) and
no GPU kernels, copies or streams. With a CUDA build of torch the same script records the
kernels too (pass --device cuda), and `strata gpu top` then lists them.
"""
import argparse
import gzip
import os
import shutil
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?", default=os.path.join(HERE, "torch_cpu_trace.json.gz"))
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device(args.device)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(64, 16, device=device)
    y = x.sum(dim=1, keepdim=True)

    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities, record_shapes=True) as prof:
        for _ in range(args.steps):
            with record_function("train_step"):
                loss = torch.nn.functional.mse_loss(model(x), y)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()

    # export_chrome_trace writes plain JSON; gzip it here with a fixed timestamp so the file
    # changes only when the trace does.
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(plain)
        with open(plain, "rb") as src, open(args.out, "wb") as raw:
            with gzip.GzipFile(filename="trace.json", mode="wb", fileobj=raw, mtime=0) as dst:
                shutil.copyfileobj(src, dst)
    print(f"{args.out}: {os.path.getsize(args.out)} bytes, torch {torch.__version__}, "
          f"{args.steps} steps on {device.type}, final loss {loss.item():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
