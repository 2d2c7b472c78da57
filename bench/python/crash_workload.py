"""The crash bench's program: sleeps, stamps CLOCK_REALTIME into argv[1], then reads an unmapped
address through ctypes (SIGSEGV in memmove, called from Python)."""
import ctypes
import sys
import time


def crash(stamp_path):
    with open(stamp_path, "w") as f:
        f.write(str(time.time_ns()))
    ctypes.string_at(0x1000, 8)


if __name__ == "__main__":
    time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0.2)
    crash(sys.argv[1])
