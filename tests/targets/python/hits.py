"""Debuggee: one function per hit-condition form, each called ten times, and lines whose
conditions are wrong or raise."""


def a(x):
    return x  # @bp:h_count


def b(x):
    return x  # @bp:h_eq


def c(x):
    return x  # @bp:h_ge


def d(x):
    return x  # @bp:h_gt


def e(x):
    return x  # @bp:h_mod


def f(x):
    return x  # @bp:cond_raises


def g(x):
    return x  # @bp:cond_syntax


for x in range(10):
    a(x)
    b(x)
    c(x)
    d(x)
    e(x)
    f(x)
    g(x)
print("hits done", flush=True)
