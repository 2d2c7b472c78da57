"""Debuggee: a torch DataLoader with two worker processes (forked, as on Linux by default);
__getitem__ runs in the workers only."""
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        value = torch.tensor(float(idx * idx))
        return value  # @bp:getitem


if __name__ == "__main__":
    loader = DataLoader(Squares(), batch_size=2, num_workers=2)
    total = sum(float(batch.sum()) for batch in loader)
    print("total", total, flush=True)
