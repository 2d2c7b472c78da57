#!/usr/bin/env python3
"""What GPU collection costs a launch-bound program, beside what CUPTI itself costs and what
torch.profiler costs, in one run. Two loops, each timed by the program itself: `c`
(examples/cuda/launch_loop, N launches of an empty kernel) and `torch` (torch_tiny_ops.py, N
in-place adds of a small CUDA tensor; skipped, with the reason, where torch has no CUDA). Each
loop runs plain; under the floor (libstrata_cupti_floor.so injected: CUPTI tracing kernels with
Strata's buffers, nothing else); under `strata gpu run --off|--trace|--stacks`; under each
--variant (`--trace` with extra environment); the torch loop also inside torch.profiler. All
rows are interleaved round by round, in the same order every round. Prints per loop a table
(min / median ns per launch, the median against plain and against the floor) and the goals:
trace within 0.5 us a launch of the floor, trace below torch.profiler, stacks within 1 us a
launch of trace.

    python3 bench/gpu/collection_overhead.py [--build build/release] [--rounds 3]
    python3 bench/gpu/collection_overhead.py --strata BUNDLE/bin/strata --loop BUNDLE/examples/launch_loop \\
        --floor BUNDLE/bin/libstrata_cupti_floor.so --torch-script BUNDLE/bench/torch_tiny_ops.py --python python3
    ... --variant errors-off:STRATA_GPU_ERRORS=0 --floor-kinds kernel+runtime+driver

Without a GPU it says "no GPU: ..." and why, prints no numbers and exits 3. Exit 1 when a run
failed or a row could not be measured (each is listed), 0 otherwise: the goals are reported,
not enforced.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
NS_PER_LAUNCH = re.compile(r"([0-9.]+) ns per launch")
FLOOR_LINE = re.compile(r"^strata-cupti-floor: (.*)$", re.M)
FLOOR_COUNTS = re.compile(r"^(\d+) kernels, (\d+) dropped$")
# Set by `strata gpu run` over the inherited environment: a variant could not change them.
SET_BY_STRATA = ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "STRATA_GPU_MODE", "STRATA_GPU_DIR",
                 "STRATA_GPU_SESSION", "STRATA_GPU_FLUSH_MS")
# Inherited settings that would change what a row measures: no row gets them unless it sets them.
CLEARED = ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "STRATA_FLOOR_KINDS")
STRATA_MODES = ("off", "trace", "stacks")


def gpu_absent():
    """Why this machine cannot run the bench, or None. The tests replace it to run with fakes."""
    if not (os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/dxg")):
        return "this machine has no NVIDIA driver loaded (/proc/driver/nvidia/version does not exist)"
    return None


def no_gpu(why):
    print(f"no GPU: {why}; no overhead numbers were measured", flush=True)
    sys.exit(3)


class Run:
    """One process: its ns per launch (None when it printed none), output and exit status."""

    def __init__(self, cmd, env, timeout):
        self.timed_out = False
        # A session of its own, so a timeout kills strata's child (the program) as well.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        try:
            self.stdout, self.stderr = proc.communicate(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            self.timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            self.stdout, self.stderr = proc.communicate()
        self.rc = proc.returncode
        m = NS_PER_LAUNCH.search(self.stdout)
        self.ns = float(m.group(1)) if m else None

    def tail(self, n=300):
        return (self.stdout + self.stderr).strip()[-n:]


class Row:
    """A table row: how one loop is run (a mode) and what it measured across the rounds."""

    def __init__(self, name, kind, argv, env=None, floor_kinds=None):
        self.name, self.kind, self.argv, self.env, self.floor_kinds = name, kind, argv, env or {}, floor_kinds
        self.samples, self.notes = [], []


def parse_variant(text):
    """NAME:ENV=VALUE[,ENV=VALUE] -> (NAME, {ENV: VALUE}); ValueError says what is wrong."""
    name, sep, assignments = text.partition(":")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise ValueError(f"--variant {text!r}: expected NAME:ENV=VALUE[,ENV=VALUE], NAME of letters, digits, _.+-")
    env = {}
    for a in assignments.split(","):
        key, eq, value = a.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ValueError(f"--variant {text!r}: {a!r} is not ENV=VALUE")
        if key in SET_BY_STRATA:
            raise ValueError(f"--variant {text!r}: strata gpu run sets {key} itself, so a variant cannot change it")
        env[key] = value
    return name, env


def make_rows(loop, program, args, floor, strata, work):
    """The rows of one loop, in the order each round runs them."""
    rows = [Row("plain", "plain", lambda r: program)]
    if floor:
        rows.append(Row("cupti-floor", "floor", lambda r: program, {"CUDA_INJECTION64_PATH": floor}))
        for kinds in args.floor_kinds:
            rows.append(Row(f"cupti-floor {kinds}", "floor", lambda r: program,
                            {"CUDA_INJECTION64_PATH": floor, "STRATA_FLOOR_KINDS": kinds}, kinds))

    def strata_argv(mode, tag):
        return lambda r: [strata, "gpu", "run", "--" + mode, "--store",
                          os.path.join(work, f"{loop}-{tag}-{r}.strata"), "--", *program]

    for mode in STRATA_MODES:
        rows.append(Row(mode, "strata" if mode != "off" else "strata-off", strata_argv(mode, mode)))
    for name, env in args.variants:
        label = f"trace {name} ({', '.join(f'{k}={v}' for k, v in env.items())})"
        rows.append(Row(label, "strata", strata_argv("trace", "variant-" + name), env))
    if loop == "torch":
        rows.append(Row("torch.profiler", "profiler", lambda r: [*program, "--profiler"]))
    return rows


def check_floor(row, run, launches):
    """The floor's line at exit must show every kernel traced; otherwise why the sample is void."""
    lines = FLOOR_LINE.findall(run.stderr)
    if not lines:
        return ("no strata-cupti-floor line on stderr: the CUDA driver never called its InitializeInjection "
                f"(exit {run.rc}: {run.tail(200)})")
    m = FLOOR_COUNTS.match(lines[-1])
    if not m:
        return f"the floor failed: {lines[-1]}"
    kernels, dropped = int(m.group(1)), int(m.group(2))
    if kernels < launches:
        return f"the floor traced {kernels} kernels of the {launches} launched ({dropped} dropped)"
    return None


def check_strata(row, run, store, launches, strata, timeout):
    """A Strata row counts only when its store holds every kernel launched (trace and stacks):
    a collector that lost records would look cheaper than it is."""
    if not os.path.exists(store):
        return f"no store was written ({run.tail(200)})"
    try:
        done = subprocess.run([strata, "gpu", "sql", "SELECT count(*) FROM kernels", "--json", store],
                              capture_output=True, text=True, timeout=max(timeout, 5))
        kernels = int(json.loads(done.stdout)["rows"][0][0])
    except (subprocess.TimeoutExpired, ValueError, KeyError, IndexError, TypeError) as e:
        return f"strata gpu sql could not count the store's kernels ({type(e).__name__}: {e})"
    if kernels < launches:
        return f"the store holds {kernels} kernels of the {launches} launched"
    return None


def measure(row, r, launches, base_env, strata, deadline):
    """One run of one row; a sample, or a note saying why there is none."""
    env = dict(base_env)
    env.update(row.env)
    argv = row.argv(r)
    timeout = deadline - time.monotonic()
    run = Run(argv, env, timeout)
    if run.timed_out:
        return None, f"round {r + 1}: killed after {timeout:.0f} s (--timeout-total)", True
    if run.rc != 0 or run.ns is None:
        return None, f"round {r + 1}: exit {run.rc}, no 'ns per launch': {run.tail()}", False
    why = None
    if row.kind == "floor":
        why = check_floor(row, run, launches)
    elif row.kind == "strata":
        store = argv[argv.index("--store") + 1]
        why = check_strata(row, run, store, launches, strata, deadline - time.monotonic())
    if row.kind.startswith("strata"):
        store = argv[argv.index("--store") + 1]
        if os.path.exists(store):
            os.unlink(store)  # hundreds of MB over a run otherwise
    if why:
        return None, f"round {r + 1}: {why}", False
    return run.ns, None, False


def us(delta_ns):
    return f"{delta_ns / 1000:+.2f} µs"


def median(row):
    return statistics.median(row.samples) if row.samples else None


def report(title, rows, rounds, problems):
    """The table of one loop and its goals."""
    by_kind = {r.name: r for r in rows}
    plain = median(by_kind["plain"])
    floor = median(by_kind["cupti-floor"]) if "cupti-floor" in by_kind else None
    print()
    print(f"### {title}")
    print()
    print("| mode | ns per launch, min / median | median − plain | median − floor | median vs plain | note |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for row in rows:
        note = "; ".join(row.notes)
        if not row.samples:
            print(f"| {row.name} | not measured | | | | {note} |")
            continue
        med = median(row)
        minus_plain = us(med - plain) if plain is not None and row.name != "plain" else "—"
        minus_floor = us(med - floor) if floor is not None and row.name != "cupti-floor" else "—"
        vs_plain = f"{(med / plain - 1) * 100:+.1f} %" if plain and row.name != "plain" else "—"
        runs = f" ({len(row.samples)} of {rounds} runs)" if len(row.samples) < rounds else ""
        print(f"| {row.name} | {min(row.samples):.1f} / {med:.1f}{runs} | {minus_plain} | {minus_floor} | "
              f"{vs_plain} | {note} |")
    print()
    trace, stacks = median(by_kind["trace"]), median(by_kind["stacks"])
    profiler = median(by_kind["torch.profiler"]) if "torch.profiler" in by_kind else None

    def missing(*names):
        gone = [n for n in names if n not in by_kind or not by_kind[n].samples]
        return f"not measured ({', '.join(gone)}: no run counted)" if gone else None

    why = missing("trace", "cupti-floor")
    print("trace within 0.5 µs a launch of the floor: " +
          (why or f"{'yes' if trace - floor <= 500 else 'no'} ({us(trace - floor)})"))
    if "torch.profiler" not in by_kind:
        print("trace below torch.profiler: n/a (torch.profiler runs in the torch loop only)")
    else:
        why = missing("trace", "torch.profiler")
        print("trace below torch.profiler: " +
              (why or f"{'yes' if trace < profiler else 'no'} (trace {trace:.1f}, torch.profiler {profiler:.1f} "
                      "ns per launch)"))
    why = missing("stacks", "trace")
    print("stacks within 1 µs a launch of trace: " +
          (why or f"{'yes' if stacks - trace <= 1000 else 'no'} ({us(stacks - trace)})"))
    for row in rows:
        problems.extend(f"{title.split(':')[0]}, {row.name}: {n}" for n in row.notes)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    p.add_argument("--strata", help="the strata CLI (default: BUILD/adapter/cli/strata)")
    p.add_argument("--loop", help="launch_loop (default: BUILD/examples/cuda/launch_loop)")
    p.add_argument("--floor", help="libstrata_cupti_floor.so (default: BUILD/bench/gpu/libstrata_cupti_floor.so)")
    p.add_argument("--python", default=sys.executable,
                   help="the Python with torch for the torch loop (default: the one running this)")
    p.add_argument("--torch-script", default=os.path.join(HERE, "torch_tiny_ops.py"))
    p.add_argument("--launches", type=int, default=200000, help="launch_loop's launches a run")
    p.add_argument("--launches-torch", type=int, default=30000, help="torch_tiny_ops' launches a run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variant", action="append", default=[], metavar="NAME:ENV=VALUE[,ENV=VALUE]",
                   help="one more row: strata gpu run --trace with these variables set (repeatable)")
    p.add_argument("--floor-kinds", action="append", default=[], metavar="KINDS",
                   help="one more floor row with STRATA_FLOOR_KINDS=KINDS, e.g. kernel+memcpy+memset+sync")
    p.add_argument("--timeout-total", type=float, default=150,
                   help="seconds for the whole bench, probes included: rounds that would not fit are not started")
    args = p.parse_args(argv)
    if args.launches < 1 or args.launches_torch < 1 or args.rounds < 1:
        p.error("--launches, --launches-torch and --rounds must be at least 1")
    try:
        args.variants = [parse_variant(v) for v in args.variant]
    except ValueError as e:
        p.error(str(e))
    for kinds in args.floor_kinds:
        if not re.fullmatch(r"[a-z]+(\+[a-z]+)*", kinds):
            p.error(f"--floor-kinds {kinds!r}: kinds joined by '+', e.g. kernel+memcpy+memset+sync")
    started = time.monotonic()
    deadline = started + args.timeout_total

    # The GPU first: without one nothing here can be measured, whatever else is missing.
    why = gpu_absent()
    if why:
        no_gpu(why)
    strata = args.strata or os.path.join(args.build, "adapter", "cli", "strata")
    loop = args.loop or os.path.join(args.build, "examples", "cuda", "launch_loop")
    floor = args.floor or os.path.join(args.build, "bench", "gpu", "libstrata_cupti_floor.so")
    for path in (strata, loop):
        if not os.access(path, os.X_OK):
            sys.exit(f"collection_overhead: {path} is missing: build the release preset first (cmake --build "
                     "--preset release --target strata strata_cupti strata_cupti_floor example_cuda_launch_loop)")
    problems = []
    if not os.path.isfile(floor):
        problems.append(f"no floor rows: {floor} does not exist (build strata_cupti_floor, or pass --floor)")
        floor = None
    else:
        floor = os.path.abspath(floor)  # CUDA_INJECTION64_PATH is opened as given, from the program's directory

    base_env = {k: v for k, v in os.environ.items() if k not in CLEARED and not k.startswith("STRATA_GPU_")}
    probe = Run([loop, "1000"], base_env, deadline - time.monotonic())
    if probe.timed_out:
        sys.exit(f"collection_overhead: {loop} 1000 did not end within --timeout-total {args.timeout_total:.0f} s")
    if probe.ns is None:
        no_gpu(f"launch_loop could not launch a kernel (exit {probe.rc}): {probe.tail(500)}")

    loops = [("c", [loop, str(args.launches)], args.launches,
              f"launch_loop: {args.launches} empty-kernel launches a run")]
    torch_line = None
    if not os.path.isfile(args.torch_script):
        torch_line = f"torch loop skipped: {args.torch_script} does not exist (pass --torch-script)"
        problems.append(torch_line)
    else:
        tprobe = Run([args.python, args.torch_script, "100", "--warmup", "10"], base_env, deadline - time.monotonic())
        if tprobe.rc == 3:
            torch_line = f"torch loop skipped: {tprobe.tail(500)}"
        elif tprobe.ns is None:
            torch_line = f"torch loop skipped: its probe failed (exit {tprobe.rc}): {tprobe.tail(500)}"
            problems.append(torch_line)
        else:
            torch_line = f"torch loop with {args.python}: {tprobe.stdout.strip()}"
            loops.append(("torch", [args.python, args.torch_script, str(args.launches_torch)], args.launches_torch,
                          f"torch_tiny_ops: {args.launches_torch} in-place adds of a 256-element CUDA tensor a run"))

    gpu = "?"
    if shutil.which("nvidia-smi"):
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    print(f"GPU: {gpu}; {args.rounds} rounds, every row of a loop once a round, in the same order; "
          f"load average at start: {os.getloadavg()[0]:.1f}", flush=True)
    if torch_line:
        print(torch_line, flush=True)

    timed_out, rounds_done, longest = False, 0, 0.0
    with tempfile.TemporaryDirectory(prefix="strata-gpu-overhead-") as work:
        plan = [(name, make_rows(name, program, args, floor, strata, work), launches, title)
                for name, program, launches, title in loops]
        for r in range(args.rounds):
            left = deadline - time.monotonic()
            if r > 0 and longest > left:
                print(f"stopped after {r} of {args.rounds} rounds: another (the longest took {longest:.0f} s) "
                      f"would pass --timeout-total {args.timeout_total:.0f} s", flush=True)
                break
            t0 = time.monotonic()
            for name, rows, launches, _ in plan:
                for row in rows:
                    ns, note, timed_out = measure(row, r, launches, base_env, strata, deadline)
                    if ns is not None:
                        row.samples.append(ns)
                    if note:
                        row.notes.append(note)
                    if timed_out:
                        break
                if timed_out:
                    break
            if timed_out:
                print(f"stopped in round {r + 1}: --timeout-total {args.timeout_total:.0f} s reached", flush=True)
                break
            rounds_done += 1
            longest = max(longest, time.monotonic() - t0)
            print(f"round {r + 1} of {args.rounds}: {time.monotonic() - t0:.1f} s", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}; {time.monotonic() - started:.0f} s in all")
    print("rows: plain = the loop alone; cupti-floor = libstrata_cupti_floor.so injected (CUPTI tracing "
          "CONCURRENT_KERNEL only, Strata's buffers, records counted); off / trace / stacks = strata gpu run "
          "--MODE; trace NAME = --trace with those variables; torch.profiler = the loop inside "
          "torch.profiler.profile(activities=[CPU, CUDA]), the trace not exported")
    for _, rows, _, title in plan:
        report(title, rows, rounds_done, problems)
    if problems:
        print()
        for f in problems:
            print("failed:", f)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
