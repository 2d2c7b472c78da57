"""Debuggee: another tool holds the debugger's sys.monitoring id (3.12+), or the trace hook (3.10,
3.11), before the agent starts."""
import sys
import time

import strata



def other_debugger(frame, event, arg):
    return None


if hasattr(sys, "monitoring"):
    sys.monitoring.use_tool_id(sys.monitoring.DEBUGGER_ID, "other-debugger")
else:
    sys.settrace(other_debugger)
strata.listen("127.0.0.1:0", port_file=sys.argv[1])
time.sleep(3)
print("still running")
