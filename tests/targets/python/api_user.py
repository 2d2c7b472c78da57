"""Debuggee: starts the agent itself with strata.listen and stops with strata.breakpoint."""
import sys

import strata

strata.listen("127.0.0.1:0", port_file=sys.argv[1])
strata.wait_for_client()
value = 41
strata.breakpoint()  # @bp:api_break
value += 1  # @bp:api_next
print("value", value)
