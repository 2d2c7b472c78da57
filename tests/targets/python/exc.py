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


def fail(x):
    if x > 2:
        raise RuntimeError(f"bad {x}")  # @bp:uncaught
    return fail(x + 1)


def main():
    caught()
    value_caught()
    inspect.getmembers(Tricky())
    try:
        with open(__file__):
            raise OSError("inside with")
    except OSError:
        pass
    if "raise" in sys.argv:
        fail(0)


main()
