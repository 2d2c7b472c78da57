"""Debuggee: one training step of a small real PyTorch model on CPU. Counts every way a tensor's
data could be read for display (repr, str, format, item, tolist, numpy, iteration), so a test
can check that the debugger showed the tensors without reading them."""
import torch

READS = []


def _counting(name):
    original = getattr(torch.Tensor, name)

    def wrapper(self, *args, **kwargs):
        READS.append(name)
        return original(self, *args, **kwargs)
    return wrapper


for _name in ("__repr__", "__str__", "__format__", "item", "tolist", "numpy", "__iter__"):
    setattr(torch.Tensor, _name, _counting(_name))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(3, 8)
        self.out = torch.nn.Linear(8, 1)
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x))) * self.scale


class Tower(torch.nn.Module):
    """A module holding a Sequential, a BatchNorm1d (its running statistics are buffers) and the
    Sequential's first layer a second time: named_parameters() lists that layer once."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.zeros(5))
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
        self.norm = torch.nn.BatchNorm1d(1)
        self.first = self.body[0]


def main():
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(16, 3)
    y = torch.randn(16, 1)
    loss = torch.nn.functional.mse_loss(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ids = torch.arange(6, dtype=torch.int64)
    seq = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    tower = Tower()
    print("step done", len(READS))  # @bp:after_step
    return loss


main()
