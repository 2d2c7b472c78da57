"""The child processes of a debugged program as child sessions (launch and attach "subProcess",
on by default). The adapter gives the agent a loopback address and a token (the launch or attach
request's "strataChildren"); the agent puts them in os.environ, with the start-up hook's folder
(_rankboot/) first on PYTHONPATH, so every Python process started under this one (subprocess,
multiprocessing's spawn and forkserver) dials that address when it starts, and a forked one
from the agent's fork hook. The adapter offers each to the client as a session of its own
(strataHandover, then DAP's startDebugging), and the process waits until that session has set its
breakpoints. When the session ends, os.environ is as it was."""
import errno
import os

ADDRESS = "STRATA_CHILDREN"
TOKEN = "STRATA_CHILD_TOKEN"
BOOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rankboot")

_saved = None  # os.environ's values before enable(), for disable()


def enable(address, token):
    """Children of this process, from now on, dial `address` with `token`."""
    global _saved
    if _saved is None:
        _saved = {name: os.environ.get(name) for name in (ADDRESS, TOKEN, "PYTHONPATH")}
    os.environ[ADDRESS] = str(address)
    os.environ[TOKEN] = str(token)
    path = [p for p in (_saved["PYTHONPATH"] or "").split(os.pathsep) if p and p != BOOT]
    os.environ["PYTHONPATH"] = os.pathsep.join([BOOT] + path)


def disable():
    """Children started from now on run as they would without the debugger."""
    global _saved
    if _saved is None:
        return
    for name, value in _saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _saved = None


def boot(agent):
    """In a new process under a debugged one: dials the adapter with `agent` (_agent.get()) and
    waits for the child session to configure it. A debugger that has gone (its session ended)
    is no error: the process runs on without it."""
    address, token = os.environ.get(ADDRESS), os.environ.get(TOKEN)
    if not address or not token:
        return False
    from . import _ranks
    return _ranks.dial(agent, address, token, quiet=(errno.ECONNREFUSED, errno.ECONNRESET))
