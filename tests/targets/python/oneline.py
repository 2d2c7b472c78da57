"""Debuggee: a loop written on one line, whose back-edges raise no LINE event."""


def spin():
    n = 0
    while n < 5: n += 1  # noqa: E701  # @bp:oneline
    return n


spin()
