"""A small PyTorch training loop (an MLP fitting a noisy linear map) that runs on the GPU when
there is one and on the CPU otherwise. `strata gpu run --stacks -- python3 train_torch.py` ties
each kernel to the line of this file that launched it (the lines marked `# @gpu:`).

    python3 examples/python/train_torch.py [--steps N] [--batch N] [--hidden N] [--device auto|cpu|cuda]

Prints the loss every 50 steps and one summary line: `train_torch: N steps on DEVICE ...`.
"""
import argparse
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("train_torch: PyTorch is not installed (Debian: apt-get install python3-torch)", file=sys.stderr)
        return 3

    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if device.type == "cpu":
        print("train_torch: no GPU available to PyTorch, training on the CPU", flush=True)

    torch.manual_seed(0)
    features = 64
    model = torch.nn.Sequential(
        torch.nn.Linear(features, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    truth = torch.randn(features, 1, device=device)  # @gpu:truth

    start = time.perf_counter()
    loss = None
    for step in range(args.steps):
        x = torch.randn(args.batch, features, device=device)  # @gpu:data
        y = x @ truth + 0.01 * torch.randn(args.batch, 1, device=device)  # @gpu:target
        loss = torch.nn.functional.mse_loss(model(x), y)  # @gpu:forward
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # @gpu:backward
        optimizer.step()  # @gpu:step
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d} loss {loss.item():.4f}", flush=True)
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"train_torch: {args.steps} steps on {device.type} in {elapsed:.2f} s, final loss {loss.item():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
