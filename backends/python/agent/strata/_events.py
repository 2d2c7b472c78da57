"""The event interface the agent uses: sys.monitoring on 3.12+; on 3.10 and 3.11 the same
interface over the core's C trace function (_tracemon)."""
import sys

if hasattr(sys, "monitoring"):
    M = sys.monitoring
else:
    from . import _tracemon as M  # noqa: F401
