"""Strata's Python agent: debug this process over DAP (listen, connect, breakpoint)."""

__all__ = ["listen", "connect", "wait_for_client", "is_client_connected", "breakpoint"]


def _get_agent():
    from . import _agent as a
    return a.get()


def listen(address=5678, port_file=None, token=None):
    """Serves one debug client at a time on HOST:PORT (loopback by default); returns (host, port).

    Off loopback a token is required (token= or STRATA_TOKEN): a client must send it first."""
    from ._link import parse_address
    host, port = parse_address(address) if not isinstance(address, tuple) else address
    return _get_agent().listen(host, port, port_file, token)


def connect(address, token=None):
    """Dials an adapter that listens on HOST:PORT (strata-dap's attach with "listen").

    Off loopback a token is required (token= or STRATA_TOKEN); it is sent before anything else."""
    from ._link import parse_address
    host, port = parse_address(address) if not isinstance(address, tuple) else address
    _get_agent().connect(host, port, token)


def wait_for_client(timeout=None):
    """Blocks until a client has connected and finished configuration (configurationDone)."""
    return _get_agent().wait_for_client(timeout)


def is_client_connected():
    from . import _agent as a
    return a._agent is not None and a._agent.connected.is_set()


def breakpoint():
    """Stops here when a client is connected; does nothing otherwise."""
    import sys
    from . import _agent as a
    if a._agent is not None:
        a._agent.stop_here(sys._getframe(1), "pause", "strata.breakpoint()")
