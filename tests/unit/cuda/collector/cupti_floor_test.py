#!/usr/bin/env python3
"""The overhead bench's floor, libstrata_cupti_floor.so (bench/gpu/cupti_floor.cpp), as the CUDA
driver meets it: it exports InitializeInjection and nothing else of note, finds libcupti through
its RUNPATH ($ORIGIN first), and, loaded by a program that calls InitializeInjection as cuInit
does (fake_driver.c), returns 1 and says at exit, in one line, what it traced or which CUPTI call
failed: without a GPU CUPTI answers CUPTI_ERROR_UNKNOWN (999), with one the line counts 0 kernels.

    cupti_floor_test.py --floor libstrata_cupti_floor.so --loader strata_gpu_fake_driver

Exit 0 when all holds, 1 with the failures, 77 (SKIPPED, with the reason) without binutils.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# What the linker defines in every shared library: not the library's own interface.
LINKER_SYMBOLS = {"_init", "_fini", "__bss_start", "_edata", "_end", "__bss_start__", "_bss_end__", "__end__"}
FLOOR_LINE = re.compile(r"^strata-cupti-floor: (.*)$", re.M)
# Every CUPTI call InitializeInjection makes, in its order: whichever CUPTI refuses first is named.
INIT_CALLS = r"(cuptiActivityRegisterCallbacks|cuptiActivityFlushPeriod|cuptiActivityEnable\(CONCURRENT_KERNEL\))"

failures = []


def check(ok, what, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(what)


def load(loader, floor, **env):
    """The loader run with the floor injected: (exit status, the floor's lines, all stderr)."""
    e = {k: v for k, v in os.environ.items() if k != "STRATA_FLOOR_KINDS"}
    e.update(env, CUDA_INJECTION64_PATH=floor)
    done = subprocess.run([loader], capture_output=True, text=True, env=e, timeout=60)
    return done.returncode, FLOOR_LINE.findall(done.stderr), done.stderr.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--floor", required=True)
    p.add_argument("--loader", required=True)
    args = p.parse_args()
    for tool in ("nm", "readelf"):
        if not shutil.which(tool):
            print(f"SKIPPED: {tool} (binutils) is not on PATH, so the floor's exports cannot be read")
            return 77
    floor = os.path.abspath(args.floor)

    nm = subprocess.run(["nm", "-D", "--defined-only", floor], capture_output=True, text=True)
    symbols = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    check(nm.returncode == 0, "nm -D --defined-only reads the floor", nm.stderr.strip())
    check("InitializeInjection" in symbols, "the floor exports InitializeInjection", " ".join(sorted(symbols)))
    extra = symbols - LINKER_SYMBOLS - {"InitializeInjection"}
    check(not extra, "the floor exports nothing else", " ".join(sorted(extra)) or "no other symbol")

    dyn = subprocess.run(["readelf", "-d", floor], capture_output=True, text=True).stdout
    runpath = re.search(r"\(RUNPATH\)\s+Library runpath: \[([^\]]*)\]", dyn)
    check(bool(runpath) and runpath.group(1).split(":")[0] == "$ORIGIN",
          "the floor finds libcupti through RUNPATH, $ORIGIN first", runpath.group(1) if runpath else "no RUNPATH")

    gpu = os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/dxg")
    rc, lines, stderr = load(args.loader, floor)
    check(rc == 0, "InitializeInjection returned 1 (the loader exits 0)", f"exit {rc}; {stderr}")
    check(len(lines) == 1, "one strata-cupti-floor line at exit", f"{len(lines)} lines: {stderr}")
    line = lines[-1] if lines else ""
    if gpu:
        # A driver here: CUPTI traces, and the loader launched nothing.
        check(line == "0 kernels, 0 dropped", "with a GPU the floor counts the kernels (none here)", line)
    else:
        check(re.fullmatch(INIT_CALLS + r" failed: CUPTI_ERROR_UNKNOWN \(999\)", line) is not None,
              "without a GPU the line names the CUPTI call refused and its result 999", line)

    rc, lines, stderr = load(args.loader, floor, STRATA_FLOOR_KINDS="kernel+memcpy+bogus")
    check(rc == 0 and lines == ["STRATA_FLOOR_KINDS=kernel+memcpy+bogus: 'bogus' is not a kind (kernel, memcpy, "
                                "memset, sync, runtime, driver, joined by '+', kernel among them)"],
          "a bad STRATA_FLOOR_KINDS is refused by name, InitializeInjection still returning 1", f"exit {rc}; {stderr}")
    rc, lines, stderr = load(args.loader, floor, STRATA_FLOOR_KINDS="memcpy+memset")
    check(rc == 0 and lines == ["STRATA_FLOOR_KINDS=memcpy+memset: kernel must be among the kinds"],
          "STRATA_FLOOR_KINDS without kernel is refused", f"exit {rc}; {stderr}")
    if not gpu:
        rc, lines, stderr = load(args.loader, floor, STRATA_FLOOR_KINDS="kernel+memcpy+memset+sync")
        check(rc == 0 and len(lines) == 1 and re.fullmatch(INIT_CALLS + r" failed: .* \(999\)", lines[0]) is not None,
              "with every kind asked for, the same CUPTI refusal", f"exit {rc}; {stderr}")

    print(f"{len(failures)} failures" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
