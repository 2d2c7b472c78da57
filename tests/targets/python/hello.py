# A small Python debuggee: prints, reads its arguments and environment, exits with argv[1].
import os
import sys

print("hello from Python", sys.version_info[:2] >= (3, 12))
print("args", sys.argv[1:])
print("STRATA_TEST_VAR", os.environ.get("STRATA_TEST_VAR", "(unset)"))
print("to stderr", file=sys.stderr)
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)  # @bp:exit
