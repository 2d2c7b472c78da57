"""Debuggee: prints the name of every variable in its environment, one a line, then exits."""
import os

for name in sorted(os.environ):
    print("env", name)
