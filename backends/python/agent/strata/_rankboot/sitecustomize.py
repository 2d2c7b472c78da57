"""Started by Python at start-up (this folder is first on PYTHONPATH) in every process of a job
strata-dap launched with "ranks": true, and in every Python process started under a debugged
program (its child sessions, "subProcess"): the process dials the debugger and waits until the
debugger has set its breakpoints. Then whatever `sitecustomize` this one hides runs, as it would
have without Strata."""
import os
import sys


def _strata_boot():
    here = os.path.dirname(os.path.abspath(__file__))
    ranks, children = os.environ.get("STRATA_RANKS"), os.environ.get("STRATA_CHILDREN")
    if ranks or children:
        # The agent is the package this folder is in; the program's own sys.path is left as it is.
        root = os.path.dirname(os.path.dirname(here))
        sys.path.insert(0, root)
        try:
            from strata import _agent, _children, _ranks
            if ranks:
                _ranks.boot(_agent.get())
            else:
                _children.boot(_agent.get())
        except Exception as e:  # noqa: BLE001 - the program must run even if the debugger cannot
            sys.stderr.write(f"strata: this process runs without the debugger: {type(e).__name__}: {e}\n")
        finally:
            if sys.path and sys.path[0] == root:
                del sys.path[0]
    # The sitecustomize this module stands in front of (a distribution's, a virtual env's).
    saved = list(sys.path)
    mine = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib
        try:
            importlib.import_module("sitecustomize")
        except ImportError:
            pass
    finally:
        sys.path[:] = saved
        if mine is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = mine


_strata_boot()
