"""Debuggee: keeps working after the debugger leaves; writes its result and the tool-id holder."""
import sys
import time

out = sys.argv[1]
total = 0
for i in range(30):
    total += i  # @bp:work
    time.sleep(0.02)
with open(out, "w") as f:
    f.write(f"{total} {sys.monitoring.get_tool(sys.monitoring.DEBUGGER_ID)}")
