"""Debuggee: values of every shape the variables view must page, summarise or guard."""
import collections
import time


class FakeTensor:
    """Looks like a torch tensor; records any access to its data."""
    data_reads = []

    def __init__(self, shape, device="cuda:0"):
        self.shape = tuple(shape)
        self.dtype = "torch.float32"
        self.device = device
        self.requires_grad = False

    def __getitem__(self, i):
        return FakeTensor(self.shape[1:], self.device)

    def __repr__(self):
        FakeTensor.data_reads.append("repr")
        return "FakeTensor(...data...)"

    def item(self):
        FakeTensor.data_reads.append("item")
        return 0.0

    def tolist(self):
        FakeTensor.data_reads.append("tolist")
        return []

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        FakeTensor.data_reads.append("iter")
        return iter(())


class FakeModule:
    def __init__(self):
        self._parameters = {"weight": FakeTensor((4, 3)), "bias": FakeTensor((4,))}
        self._buffers = {"running_mean": FakeTensor((4,))}
        self._modules = {}
        self.training = True


class FakeStack:
    """Looks like a torch module holding many others: parameters and buffers count recursively."""

    def __init__(self, n):
        self._parameters = {"scale": FakeTensor((1,)), "unused": None}
        self._buffers = {}
        self._modules = {str(i): FakeModule() for i in range(n)}
        self._modules["absent"] = None


class BadRepr:
    def __repr__(self):
        raise ValueError("no repr for you")


class SlowRepr:
    def __repr__(self):
        t = time.time() + 5
        while time.time() < t:
            pass
        return "finally"


class Point:
    dims = 2

    def __init__(self):
        self.x = 1
        self.y = "two"


def main():
    big = list(range(100000))
    d = {f"k{i}": i for i in range(50)}
    s = {1, 2, 3}
    text = "abc" * 1000
    raw = b"\x00\x01" * 10
    dq = collections.deque([1, 2, 3])
    tup = (1, "two", 3.0)
    pt = Point()
    tensor = FakeTensor((1000, 1000, 3))
    net = FakeModule()
    stack = FakeStack(600)
    bad = BadRepr()
    slow = SlowRepr()
    counter = 10
    print("inspect", len(big), counter)  # @bp:inspect
    print("counter is", counter)  # @bp:after
    return FakeTensor.data_reads


main()
