"""Debuggee: writes a module at run time, then imports and runs it."""
import os
import sys
import tempfile

folder = sys.argv[1]
with open(os.path.join(folder, "made_later.py"), "w") as f:
    f.write("def run():\n    value = 5\n    return value * 2\n")
sys.path.insert(0, folder)
import made_later  # noqa: E402

print("result", made_later.run())
del tempfile
