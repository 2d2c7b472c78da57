"""The processes of a distributed job strata-dap launched ("ranks": true): each dials the
debugger named in STRATA_RANKS when it starts (the sitecustomize in _rankboot/) or when it is
forked from one that does (a DataLoader worker), and waits for its breakpoints. The children of a
debugged program dial the same way (_children.py). The agent is handed in: this module does not
import _agent."""
import os
import sys

# Where launchers put a process's rank: torchrun, Open MPI, MPICH/PMI, Slurm.
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")
# How long a new process waits for the debugger to configure it before it runs on regardless.
CONFIGURE_WAIT = 30.0


def rank():
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def describe():
    """What the adapter asks of a process that dialed in (strataProcess)."""
    import socket
    return {"pid": os.getpid(), "ppid": os.getppid(), "rank": rank(), "host": socket.gethostname(),
            "argv": list(sys.argv[:8]), "executable": sys.executable}


def boot(agent):
    """Dials the debugger named in STRATA_RANKS with `agent` (the process's _agent.get()) and
    waits for it to configure this process."""
    address = os.environ.get("STRATA_RANKS")
    if not address:
        return False
    return dial(agent, address, os.environ.get("STRATA_LAUNCH_TOKEN") or None)


def dial(agent, address, token, quiet=()):
    """Dials the debugger at `address`, sending `token` first, and waits until it has configured
    this process (or CONFIGURE_WAIT has passed). An error whose errno is in `quiet` is not said."""
    from ._link import parse_address, require_token
    host, port = parse_address(address)
    require_token(host, token, "connecting to")
    agent.configured.clear()
    try:
        agent.connect(host, port, token_line=token)
    except OSError as e:
        agent.configured.set()
        if e.errno not in quiet:
            sys.stderr.write(f"strata: cannot reach the debugger at {address} ({e.strerror or e}); "
                             f"process {os.getpid()} runs without it\n")
        return False
    if not agent.wait_for_client(CONFIGURE_WAIT):
        sys.stderr.write(f"strata: the debugger did not configure process {os.getpid()} within "
                         f"{CONFIGURE_WAIT:.0f} s; it runs on\n")
    return True
