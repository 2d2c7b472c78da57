"""Example training-style loop: fits y = 3x + 2 with plain-Python gradient descent."""
import argparse
import random
import sys


def make_data(n, seed=0):
    rng = random.Random(seed)
    xs = [rng.uniform(-1, 1) for _ in range(n)]
    return [(x, 3 * x + 2 + rng.gauss(0, 0.01)) for x in xs]


def train_step(w, b, batch, lr):
    gw = gb = 0.0
    for x, y in batch:
        err = (w * x + b) - y
        gw += 2 * err * x / len(batch)
        gb += 2 * err / len(batch)
    loss = sum(((w * x + b) - y) ** 2 for x, y in batch) / len(batch)
    return w - lr * gw, b - lr * gb, loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--fail", action="store_true", help="end with an error, to show exit codes")
    args = parser.parse_args()
    data = make_data(256)
    w, b = 0.0, 0.0
    for epoch in range(args.epochs):
        for i in range(0, len(data), 32):
            w, b, loss = train_step(w, b, data[i:i + 32], lr=0.3)
        print(f"epoch {epoch}: loss={loss:.5f} w={w:.3f} b={b:.3f}")
    if args.fail:
        print("simulated failure: loss diverged", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main()
