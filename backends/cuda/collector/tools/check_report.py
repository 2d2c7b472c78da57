"""What the GPU check scripts share: PASS/FAIL/SKIP lines, marked source lines, their command
line, the PyTorch prerequisite, and checks run on a debug session."""
import argparse
import os
import subprocess
import sys
import tempfile

failed = False

# The sticky CUDA errors a kernel's fault can be reported as (the collector's list): which one
# depends on the GPU (an H200 reports an out-of-bounds write as 717, older GPUs as 700).
STICKY = {700: "cudaErrorIllegalAddress", 702: "cudaErrorLaunchTimeout", 710: "cudaErrorAssert",
          714: "cudaErrorHardwareStackError", 715: "cudaErrorIllegalInstruction", 716: "cudaErrorMisalignedAddress",
          717: "cudaErrorInvalidAddressSpace", 718: "cudaErrorInvalidPc", 719: "cudaErrorLaunchFailure"}


def say(verdict, name, detail=""):
    global failed
    failed = failed or verdict == "FAIL"
    print(f"{verdict} {name}{': ' + detail if detail else ''}", flush=True)


def check(name, ok, detail):
    say("PASS" if ok else "FAIL", name, detail)


def marker_line(path, marker):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if marker in line:
                return number
    raise SystemExit(f"{path}: no line marked {marker}")


def arguments(required, work_prefix=None):
    """The parsed command line: --NAME VALUE for each NAME of `required`, --python (default: this
    interpreter) and, given work_prefix, --work: the folder for the run's files, a new temporary
    one named with that prefix unless given, made either way."""
    p = argparse.ArgumentParser()
    for name in required:
        p.add_argument("--" + name, required=True)
    p.add_argument("--python", default=sys.executable)
    if work_prefix:
        p.add_argument("--work", default=None)
    args = p.parse_args()
    if work_prefix:
        args.work = args.work or tempfile.mkdtemp(prefix=work_prefix)
        os.makedirs(args.work, exist_ok=True)
    return args


def torch_missing(python, agent=False):
    """Why the PyTorch checks cannot run under `python`, or None: no PyTorch with CUDA there, or,
    with agent, no agent package to debug it with (STRATA_AGENT_PYTHONPATH)."""
    has = subprocess.run([python, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"],
                         capture_output=True)
    if has.returncode != 0:
        return f"PyTorch with CUDA is not available to {python}"
    if agent and not os.environ.get("STRATA_AGENT_PYTHONPATH"):
        return "STRATA_AGENT_PYTHONPATH (the agent package) is not set"
    return None


def session_checks(name, open_session, checks):
    """checks(*open_session()) on a debug session: open_session returns the client (with
    close()) first, then whatever else the checks take; the client is closed at the end. An
    exception in either is the check `name` failing, and the script goes on."""
    try:
        session = open_session()
    except Exception as e:  # noqa: BLE001 - reported, the other checks go on
        say("FAIL", name, f"{type(e).__name__}: {e}")
        return
    try:
        checks(*session)
    except Exception as e:  # noqa: BLE001
        say("FAIL", name, f"{type(e).__name__}: {e}")
    finally:
        session[0].close()
