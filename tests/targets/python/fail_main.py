"""Debuggee: fails with an uncaught exception, to compare tracebacks with a plain run."""


def boom():
    raise ValueError("plain failure")


if __name__ == "__main__":
    print("argv", __import__("sys").argv[1:], __file__.endswith("fail_main.py"))
    boom()
