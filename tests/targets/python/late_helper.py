"""Debuggee helper: a module loaded before breakpoints are set."""


def helper(x):
    y = x * 3  # @bp:helper
    return y
