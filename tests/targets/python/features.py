"""Debuggee: breakpoints in nested functions, lambdas, comprehensions, class bodies, generators, coroutines, late imports."""
import asyncio
import sys


def outer(n):
    def inner(k):
        return k + n  # @bp:nested
    return inner(1)


square = lambda v: (  # noqa: E731
    v * v)  # @bp:lambda


class Shape:
    sides = 4  # @bp:class_body

    def area(self, w):
        return w * w  # @bp:method


def gen(n):
    for i in range(n):  # @bp:gen_first
        yield i * 10  # @bp:generator


async def coro(x):
    await asyncio.sleep(0)  # @bp:coro_first
    return x + 1  # @bp:coroutine


def main():
    outer(5)
    square(3)
    vals = [x + 1 for x in range(3)]  # @bp:comprehension
    Shape().area(2)
    list(gen(2))  # @bp:call_gen
    asyncio.run(coro(1))  # @bp:call_coro
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import late_module
    late_module.later(7)
    return vals


main()
