"""Debuggee: a Python program that dies of a fatal signal, the way it is asked: a ctypes read of
an unmapped address (SIGSEGV in memmove), the C library's abort() (SIGABRT), a SIGFPE sent to
itself, the same read in a thread other than the main one, with faulthandler on (the
program's own handler, whose traceback must still be printed), or once a file exists
(wait=PATH: a program to attach to)."""
import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time

UNMAPPED = 0x1000  # below vm.mmap_min_addr: never mapped (a canonical address, so si_addr names it)


def load_weights(count):
    shard = count * 4
    return ctypes.string_at(UNMAPPED + shard, 16)  # @bp:crash


def give_up(reason):
    libc = ctypes.CDLL(None)
    libc.abort()  # @bp:abort


def divide(n):
    os.kill(os.getpid(), signal.SIGFPE)  # @bp:fpe
    return n


def main(how):
    print("starting", how, flush=True)
    if how == "segv":
        load_weights(3)
    elif how == "abort":
        give_up("bad checkpoint")
    elif how == "fpe":
        divide(7)
    elif how == "thread":
        worker = threading.Thread(target=load_weights, args=(5,), name="loader")
        worker.start()
        worker.join()
    elif how == "faulthandler":
        faulthandler.enable()
        load_weights(2)
    elif how.startswith("wait="):
        # A program to attach to: it crashes once the file named exists.
        print("ready", flush=True)
        while not os.path.exists(how[5:]):
            time.sleep(0.05)
        load_weights(7)
    print("not reached", flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "segv")
