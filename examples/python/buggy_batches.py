"""Example with a bug to find: the mean loss per batch of a dataset, which fails on some sizes.

    python3 buggy_batches.py [N]     (N samples, default 100; 96 works, 100 fails)

The batching rounds the number of batches up one too many, so when N is not a multiple of the
batch size the last batch is empty and its mean divides by zero. A debugger shows it at once:
the stop at the ZeroDivisionError, `batch == []`, `start == len(samples)`.
"""
import sys

BATCH = 32


def batches(samples, size):
    count = len(samples) // size + 1  # the bug: one batch too many unless size divides len
    if len(samples) % size == 0:
        count -= 1
    for k in range(count + (len(samples) % size != 0)):
        start = k * size
        yield samples[start:start + size]


def mean_loss(batch):
    return sum((x - 0.5) ** 2 for x in batch) / len(batch)  # @bp:mean


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    samples = [i / n for i in range(n)]
    losses = [mean_loss(batch) for batch in batches(samples, BATCH)]
    print(f"{len(losses)} batches, mean loss {sum(losses) / len(losses):.4f}")


if __name__ == "__main__":
    main()
