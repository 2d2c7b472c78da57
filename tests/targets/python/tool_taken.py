"""Debuggee: another tool holds the debugger's sys.monitoring id before the agent starts."""
import sys
import time

import strata

sys.monitoring.use_tool_id(sys.monitoring.DEBUGGER_ID, "other-debugger")
strata.listen("127.0.0.1:0", port_file=sys.argv[1])
time.sleep(3)
print("still running")
