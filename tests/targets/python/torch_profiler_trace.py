"""Writes a trace with torch.profiler itself (on the CPU: Debian's torch 1.13, built without
Kineto, writes its own exporter's form) and prints, as one JSON line, how many of each operator
torch counted. The GPU store's importer tests open the trace and compare.

    python3 torch_profiler_trace.py OUT.json
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

weights = torch.randn(64, 64)


def step(x):
    return torch.relu(x @ weights)


with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    x = torch.randn(64, 64)
    for _ in range(10):
        x = step(x)
prof.export_chrome_trace(sys.argv[1])
print(json.dumps({e.key: e.count for e in prof.key_averages()}), flush=True)
