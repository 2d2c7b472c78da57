"""Debuggee: keeps working after the debugger leaves; writes its result and what still instruments
it: the sys.monitoring debugger tool id's holder (3.12+), or "traced" while Strata's C trace
function is still on (3.10, 3.11)."""
import sys
import time

out = sys.argv[1]
total = 0
for i in range(30):
    total += i  # @bp:work
    time.sleep(0.02)
if hasattr(sys, "monitoring"):
    holder = sys.monitoring.get_tool(sys.monitoring.DEBUGGER_ID)
else:
    core = sys.modules.get("strata._strata_core")
    holder = "traced" if core is not None and core.trace_installed() else None
with open(out, "w") as f:
    f.write(f"{total} {holder}")
