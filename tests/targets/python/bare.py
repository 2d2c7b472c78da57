"""Debuggee that imports nothing: its stops must not load linecache or traceback either."""
import sys


def explode(n):
    raise ValueError(f"bare {n}")  # @bp:raise


def main():
    total = 0
    for i in range(3):
        total += i  # @bp:loop
    if "raise" in sys.argv:
        explode(total)  # @bp:explode_call
    print("total", total)


main()  # @bp:main_call
