"""A small data-parallel training job: WORLD ranks (4 by default) train one model on CPU with
torch.distributed's gloo backend, averaging their gradients with all_reduce every step.

Runs under torch.multiprocessing.spawn (the default), or as one rank of a job another launcher
started (mpirun, srun, or a launcher that sets torchrun's RANK/WORLD_SIZE/MASTER_ADDR/
MASTER_PORT): `--launched`, the rank and world size from the environment.

  python3 examples/distributed/train_ddp.py [--world 4] [--steps 20] [--hang-rank R] [--loader-workers W]
  mpirun -n 4 python3 examples/distributed/train_ddp.py --launched

--loader-workers W: each rank reads its batches through a torch DataLoader with W worker
processes (forked from the rank), which build the batches in `RankData.__getitem__`.

--hang-rank R: rank R stops in its data loading before step 3's all_reduce and never comes
back, so the other ranks wait in all_reduce forever: the hang `strata stacks --tree` shows.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def environment_rank():
    for name in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
        if name in os.environ:
            return int(os.environ[name])
    raise SystemExit("--launched: no RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID in the environment")


def environment_world():
    for name in ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"):
        if name in os.environ:
            return int(os.environ[name])
    raise SystemExit("--launched: no WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_NTASKS in the environment")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(8, 16)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def load_batch(rank, step, hang_rank):
    """Each rank's own slice of data; the hang flag parks one rank here for good."""
    if rank == hang_rank and step == 3:
        print(f"rank {rank} hangs in load_batch at step {step}", flush=True)
        while True:
            time.sleep(0.1)  # dist: hang_line
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(32, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.5
    return x, y


class RankData(torch.utils.data.Dataset):
    """One rank's batches, one per step, built in the DataLoader's worker processes."""

    def __init__(self, rank, steps):
        self.rank, self.steps = rank, steps

    def __len__(self):
        return self.steps

    def __getitem__(self, step):
        g = torch.Generator().manual_seed(1000 * step + self.rank)
        x = torch.randn(32, 8, generator=g)  # dist: getitem_line
        return x, x.sum(dim=1, keepdim=True) * 0.5


def average_gradients(model, world):
    for p in model.parameters():
        dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)  # dist: all_reduce_line
        p.grad /= world


def train_step(model, opt, rank, world, step, hang_rank, batch=None):
    x, y = batch if batch is not None else load_batch(rank, step, hang_rank)  # dist: load_line
    loss = torch.nn.functional.mse_loss(model(x), y)  # dist: loss_line
    opt.zero_grad()
    loss.backward()
    average_gradients(model, world)  # dist: average_line
    opt.step()
    return loss.item()


def run(rank, world, steps, hang_rank, port, loader_workers=0):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(port))
    os.environ["RANK"] = str(rank)  # seen by debuggers and tools, as torchrun sets it
    os.environ["WORLD_SIZE"] = str(world)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)  # the same initial weights on every rank
    model = Model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    print(f"rank {rank} of {world} ready", flush=True)
    loss = None
    batches = None
    if loader_workers > 0:
        loader = torch.utils.data.DataLoader(RankData(rank, steps), batch_size=None, num_workers=loader_workers)
        batches = iter(loader)
    for step in range(steps):
        batch = next(batches) if batches is not None else None
        loss = train_step(model, opt, rank, world, step, hang_rank, batch)  # dist: step_line
    # The weights stay equal across ranks: every rank applied the same averaged gradients.
    checksum = sum(float(p.sum()) for p in model.parameters())
    print(f"rank {rank} done: loss {loss:.4f} weights {checksum:.6f}", flush=True)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--hang-rank", type=int, default=-1)
    ap.add_argument("--port", type=int, default=29531)
    ap.add_argument("--loader-workers", type=int, default=0, help="DataLoader worker processes per rank")
    ap.add_argument("--launched", action="store_true", help="one rank of a job another launcher started")
    a = ap.parse_args()
    if a.launched:
        run(environment_rank(), environment_world(), a.steps, a.hang_rank, a.port, a.loader_workers)
        return
    mp.spawn(run, args=(a.world, a.steps, a.hang_rank, a.port, a.loader_workers), nprocs=a.world, join=True)
    print("job done", flush=True)


if __name__ == "__main__":
    sys.exit(main())
