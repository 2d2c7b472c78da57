"""Debuggee: a loop with a helper, for line breakpoints, conditions and stepping."""
import sys


def helper(x):
    y = x * 2  # @bp:helper_body
    return y + 1  # @bp:helper_return


def never_called():
    return 42  # @bp:never


def main():
    total = 0
    for i in range(10):
        total += helper(i)  # @bp:loop_body
    # a comment line, no code here  # @bp:comment
    print("total", total)  # @bp:after_loop
    return total


if __name__ == "__main__":
    main()  # @bp:call_main
    sys.exit(3 if len(sys.argv) > 1 and sys.argv[1] == "exit3" else 0)
