"""Debuggee: an exception that nothing catches, raised two frames down."""


def check(x):
    if x > 5:
        raise ValueError(f"bad value {x}")  # @bp:raise
    return x


def main():
    for x in (1, 7):
        check(x)


main()
