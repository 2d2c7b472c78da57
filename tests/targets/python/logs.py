"""Debuggee: a hot line for log points and false conditions, then an immediate exit."""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
acc = 0
for i in range(n):
    acc += i  # @bp:hot
sys.stdout.write(f"done {acc}\n")  # @bp:done
