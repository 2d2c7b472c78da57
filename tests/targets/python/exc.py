"""Debuggee: exceptions that are caught, caught by a library, and uncaught."""
import inspect
import sys


def caught():
    try:
        raise KeyError("k")  # @bp:raise_caught
    except KeyError:
        pass


def value_caught():
    try:
        int("x")  # @bp:raise_value
    except ValueError:
        pass


class Tricky:
    @property
    def boom(self):
        raise AttributeError("from user code")  # @bp:user_unhandled


class Countdown:
    def __init__(self):
        self.n = 2

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return self.n


def fail(x):
    if x > 2:
        raise RuntimeError(f"bad {x}")  # @bp:uncaught
    return fail(x + 1)


def main():
    caught()
    value_caught()
    inspect.getmembers(Tricky())
    for _ in Countdown():
        pass
    try:
        with open(__file__):
            raise OSError("inside with")
    except OSError:
        pass
    if "raise" in sys.argv:
        fail(0)
    sys.exit(0)


main()
