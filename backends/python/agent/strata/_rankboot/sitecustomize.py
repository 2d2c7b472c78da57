"""Started by Python at start-up in every process of a job strata-dap launched with "ranks": true
(this folder is first on PYTHONPATH): the process dials the debugger and waits until the
debugger has set its breakpoints. Then whatever `sitecustomize` this one hides runs, as it
would have without Strata."""
import os
import sys


def _strata_rank_boot():
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("STRATA_RANKS"):
        try:
            from strata import _agent, _ranks
            _ranks.boot(_agent.get())
        except Exception as e:  # noqa: BLE001 - the job must run even if the debugger cannot
            sys.stderr.write(f"strata: this process runs without the debugger: {type(e).__name__}: {e}\n")
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


_strata_rank_boot()
