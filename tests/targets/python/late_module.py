"""Debuggee helper: a module imported after breakpoints are set."""


def later(x):
    y = x + 1  # @bp:late
    return y
