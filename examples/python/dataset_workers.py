"""A DataLoader whose two worker processes build the samples, one of which is bad: reading 13
is NaN, and the batch that holds it turns the running mean into NaN.

    strata run --break "examples/python/dataset_workers.py:LINE:math.isnan(reading)" \\
        -- /usr/bin/python3 examples/python/dataset_workers.py

stops in the worker that builds that sample (a child session of its own) with its locals."""
import math

import torch
from torch.utils.data import DataLoader, Dataset


class Readings(Dataset):
    def __init__(self, count):
        self.readings = [float(i) if i != 13 else math.nan for i in range(count)]

    def __len__(self):
        return len(self.readings)

    def __getitem__(self, idx):
        reading = self.readings[idx]
        sample = torch.tensor([reading, reading / 10.0])
        return sample  # demo: getitem


def main():
    loader = DataLoader(Readings(24), batch_size=4, num_workers=2)
    total = torch.zeros(2)
    for step, batch in enumerate(loader):
        total += batch.sum(dim=0)
        print(f"batch {step}: running mean {float(total[0]) / (4 * (step + 1)):.2f}", flush=True)


if __name__ == "__main__":
    main()
