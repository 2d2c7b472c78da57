#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the examples through the real adapter
# with the strata CLI, printing what a user sees.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
bin=build/release
strata="$bin/adapter/cli/strata"

show() {
  echo
  echo "\$ strata $*"
  set +e
  "$strata" "$@"
  local rc=$?
  set -e
  echo "[exit code $rc]"
}

echo "== Strata demo: programs run through strata-dap over DAP"
show run -- "$bin/examples/native/primes" 30
show run -- examples/python/train_loop.py --epochs 5
show run --json -- "$bin/examples/native/primes" 10
show run -- examples/python/train_loop.py --epochs 2 --fail

echo
echo "== Debugging: a conditional breakpoint in train_step prints w, b and the loss each time it holds"
step_line=$(grep -n "return w - lr \* gw" examples/python/train_loop.py | cut -d: -f1)
show run --break "examples/python/train_loop.py:${step_line}:loss > 0.5" -- examples/python/train_loop.py --epochs 2

echo
echo "== Debugging native code: a conditional breakpoint in primes.c prints the stack and locals"
prime_line=$(grep -n 'printf("prime #' examples/native/primes.c | cut -d: -f1)
show run --break "examples/native/primes.c:${prime_line}:count % 4 == 0" -- "$bin/examples/native/primes" 30
