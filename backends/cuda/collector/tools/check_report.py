"""PASS/FAIL/SKIP lines and marked source lines, shared by the GPU check scripts."""

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
