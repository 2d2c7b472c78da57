"""Debuggee: run with -m pkg_demo; reports how it was started."""
import sys


def report():
    name = __name__  # @bp:module_main
    print("module", name, sys.argv[1:])


report()
