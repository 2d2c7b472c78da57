"""Debuggee: work done in child processes, started each way Python has: os.fork,
multiprocessing's spawn and forkserver, and a subprocess of the interpreter. Each child runs
work() once; the parent prints what came back and exits 0."""
import multiprocessing
import os
import subprocess
import sys


def work(tag):
    pid = os.getpid()
    return tag * 2 + 0 * pid  # @bp:work


def main(ways):
    for way in ways:
        if way == "fork":
            pid = os.fork()
            if pid == 0:
                work(1)
                os._exit(7)
            _, status = os.waitpid(pid, 0)
            print("fork", os.waitstatus_to_exitcode(status), flush=True)
        elif way in ("spawn", "forkserver"):
            with multiprocessing.get_context(way).Pool(1) as pool:
                print(way, pool.map(work, [3]), flush=True)
        elif way == "subprocess":
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], capture_output=True, text=True)
            print("subprocess", done.returncode, done.stdout.strip(), flush=True)
        else:
            raise SystemExit(f"unknown way {way}")
    print("parent done", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        print("child", work(5))
        sys.exit(3)
    main(sys.argv[1:] or ["fork", "spawn", "forkserver", "subprocess"])
