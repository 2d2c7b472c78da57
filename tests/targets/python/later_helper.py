"""Debuggee helper: a module imported after breakpoints are set (its body seen as it runs)."""
SCALE = 2  # @bp:later_body


def later(x):
    y = x * SCALE  # @bp:later
    return y
