"""Drives the mixed_ext C++ extension: Python calling C++, C++ calling back into Python, and,
with --crash, the extension's out-of-bounds write."""
import os
import sys
import time

import mixed_ext


def combine(acc, value):
    squared = value * value  # mixed: py_callback_line
    return acc + squared


def never_called():
    return 0  # mixed: py_never_line


def recurse(depth):
    if depth == 0:
        return mixed_ext.checksum(depth)
    return recurse(depth - 1)  # mixed: py_recurse_line


def main(argv):
    values = [float(i) for i in range(6)]
    scaled = mixed_ext.scale(values, 2.0)  # mixed: py_scale_line
    total = mixed_ext.fold(scaled, combine, 0.0)  # mixed: py_fold_line
    print(f"total {total:g}")
    if "--loop" in argv:
        n = int(argv[argv.index("--loop") + 1])
        acc = 0
        start = time.monotonic_ns()
        for i in range(n):
            acc ^= mixed_ext.checksum(i)  # mixed: py_loop_line
        elapsed = time.monotonic_ns() - start
        print(f"checksum {acc}")
        if "--loop-time" in argv:  # the loop's own duration, for bench/mixed
            with open(argv[argv.index("--loop-time") + 1], "w") as out:
                out.write(f"{elapsed}\n")
    if "--until" in argv:  # runs until the file exists: a program to attach to
        until, i, acc = argv[argv.index("--until") + 1], 0, 0
        print("looping", flush=True)
        while not os.path.exists(until):
            acc ^= mixed_ext.checksum(i)  # mixed: py_until_line
            i += 1
            time.sleep(0.001)
    if "--deep" in argv:
        depth, repeat = int(argv[argv.index("--deep") + 1]), 1
        if "--repeat" in argv:
            repeat = int(argv[argv.index("--repeat") + 1])
        for _ in range(repeat):
            recurse(depth)
    if "--crash" in argv:
        print(mixed_ext.histogram([0.5, 1.5, 1e12], 4))  # mixed: py_crash_line
    print("done")
    if "--result" in argv:  # for checking a run after the debugger let go of it
        with open(argv[argv.index("--result") + 1], "w") as out:
            out.write(f"total {total:g} done\n")


if __name__ == "__main__":
    main(sys.argv[1:])
