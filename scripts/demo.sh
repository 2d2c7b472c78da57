#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs the examples through the real adapter with the
# strata CLI, printing what a user sees: runs and breakpoints (Python, C, a DataLoader worker), a torch.profiler trace
# queried with `strata gpu`, the merged Python + native stacks of a hung program, a stop in a C++
# extension called from Python (mixed mode), an attach by pid, and a session kept between
# commands.
#   scripts/demo.sh
# Environment: STRATA_DEMO_BIN=DIR uses the build in DIR (default build/release);
# STRATA_DEMO_SKIP_SETUP=1 skips scripts/setup.sh (the build must exist);
# STRATA_DEMO_TIMEOUT=S bounds each strata command (default 120 s).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${STRATA_DEMO_SKIP_SETUP:-0}" != 1 ]; then
  scripts/setup.sh release
fi
bin="${STRATA_DEMO_BIN:-build/release}"
strata="$bin/adapter/cli/strata"
limit="${STRATA_DEMO_TIMEOUT:-120}"
[ -x "$strata" ] || { echo "demo: $strata is missing (build it: scripts/setup.sh release)" >&2; exit 1; }

# Native breakpoints name the source files the binaries were built from: this tree's, or, with
# STRATA_DEMO_BIN naming another tree's build, that tree's.
native_src=.
built_from=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$bin/CMakeCache.txt" 2>/dev/null || true)
if [ -n "$built_from" ] && [ "$(cd "$built_from" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]; then
  native_src="$built_from"
fi
src() { if [ "$native_src" = . ]; then echo "$1"; else echo "$native_src/$1"; fi; }

# What the demo starts in the background, ended however the demo ends.
background=()
session=""
last_rc=0
logs=$(mktemp -d)
cleanup() {
  local pid
  for pid in "${background[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$session" ]; then
    timeout 30 "$strata" session end --session "$session" >/dev/null 2>&1 || true
  fi
  rm -rf "$logs"
}
trap cleanup EXIT

quote() {
  local a out=""
  for a in "$@"; do
    if [[ $a =~ [[:space:]\<\>\|\&\;\(\)\*\$] ]]; then out+=" \"$a\""; else out+=" $a"; fi
  done
  echo "${out# }"
}

show() {
  echo
  echo "\$ strata $(quote "$@")"
  set +e
  timeout --foreground -k 10 "$limit" "$strata" "$@"
  last_rc=$?
  set -e
  [ "$last_rc" = 124 ] && echo "(stopped after ${limit} s)"
  echo "[exit code $last_rc]"
}

# The newest CPython 3.12 or 3.13 (what `strata attach --break`, `strata stacks` and the mixed
# extension all take), looked for as `strata run` looks: python3.N on PATH (pyenv's shims left
# out), then pyenv's versions, then Debian's 3.13 that scripts/setup.sh puts in build/.
# With an argument, only one for which that command (given the interpreter's minor version)
# succeeds.
find_python() {
  local want="${1:-}" minor dir exe root="${PYENV_ROOT:-$HOME/.pyenv}" candidates dirs
  for minor in 13 12; do
    candidates=()
    IFS=: read -r -a dirs <<<"${PATH:-}"
    for dir in "${dirs[@]}"; do
      [[ -n $dir && $dir != */shims* ]] && candidates+=("$dir/python3.$minor")
    done
    for exe in "$root"/versions/3."$minor".*/bin/python3."$minor"; do candidates+=("$exe"); done
    candidates+=("$PWD/build/cpython3.$minor/usr/bin/python3.$minor")
    for exe in "${candidates[@]}"; do
      [ -x "$exe" ] || continue
      if [ -z "$want" ] || "$want" "$minor"; then
        echo "$exe"
        return 0
      fi
    done
  done
  return 1
}

# Starts a Python program in the background (its output into a log) and waits for its "ready".
start_program() {
  local log="$1"
  shift
  echo
  echo "\$ $(quote "$@") &"
  "$@" >"$log" 2>&1 &
  local pid=$!
  background+=("$pid")
  for _ in $(seq 100); do
    grep -q ready "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  sed 's/^/  | /' "$log"
  echo "  (process $pid)"
  started=$pid
}

stop_program() {
  local pid="$1"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "  (process $pid ended)"
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
prime_line=$(grep -n 'printf("prime #' "$(src examples/native/primes.c)" | cut -d: -f1)
show run --break "$(src examples/native/primes.c):${prime_line}:count % 4 == 0" -- "$bin/examples/native/primes" 30

echo
echo "== A GPU trace: a real torch.profiler trace opened and queried with strata gpu"
trace=examples/gpu/torch_cpu_trace.json.gz
echo "   $trace: torch.profiler around four training steps of a tiny MLP"
echo "   (examples/gpu/make_torch_trace.py), made with Debian's CPU-only PyTorch 1.13. So it holds"
echo "   CPU operators and no GPU kernels: 'gpu top' finds no kernels, the timeline and SQL show the"
echo "   operators. A trace from a CUDA machine, or a store from 'strata gpu run', lists kernels,"
echo "   copies and syncs the same way."
show gpu top "$trace"
show gpu timeline --max 12 "$trace"
show gpu sql "SELECT name, count(*) AS calls, sum(duration_ns) / 1000 AS total_us FROM cpu_ops GROUP BY name ORDER BY total_us DESC LIMIT 8" "$trace"

py=$(find_python || true)
echo
echo "== Stacks of a hung program: two threads deadlocked on two locks, read from outside"
if [ -z "$py" ]; then
  echo "(skipped: no CPython 3.12 or 3.13 found: pyenv install 3.12)"
else
  echo "   transfer() holds accounts_lock and waits for ledger_lock; audit() holds ledger_lock and"
  echo "   waits for accounts_lock; the main thread waits in join()."
  start_program "$logs/hung.log" "$py" examples/python/hung_workers.py
  hung=$started
  show stacks "$hung"
  show stacks --python-only --locals "$hung"
  stop_program "$hung"
fi

echo
echo "== Python and C++ in one session: a stop in the C++ extension shows the Python lines that called"
echo "   it, and a stop in the Python callback the C++ frames that called back"
mixed_dir="$bin/examples/mixed"
has_mixed_ext() { compgen -G "$mixed_dir/mixed_ext.cpython-3$1-*.so" >/dev/null; }
mixed_py=$(find_python has_mixed_ext || true)
if [ -z "$mixed_py" ]; then
  echo "(skipped: no mixed_ext built in $mixed_dir for a CPython 3.12/3.13 found here)"
else
  fold_line=$(grep -n "mixed: callback_line" "$(src examples/mixed/mixed_ext.cpp)" | cut -d: -f1)
  combine_line=$(grep -n "return acc + squared" examples/mixed/driver.py | cut -d: -f1)
  show run --native --python "$mixed_py" --env "PYTHONPATH=$mixed_dir" \
    --break "$(src examples/mixed/mixed_ext.cpp):${fold_line}:v == 8" \
    --break "examples/mixed/driver.py:${combine_line}:value == 10" -- examples/mixed/driver.py
fi

echo
echo "== A DataLoader worker: the breakpoint in Dataset.__getitem__ stops in the worker process that"
echo "   builds the bad sample (a child session of its own), with its locals"
if ! /usr/bin/python3 -c "import torch.utils.data" 2>/dev/null; then
  echo "(skipped: torch does not import under /usr/bin/python3: apt-get install python3-torch)"
else
  getitem_line=$(grep -n "demo: getitem" examples/python/dataset_workers.py | cut -d: -f1)
  show run --break "examples/python/dataset_workers.py:${getitem_line}:math.isnan(reading)" \
    -- /usr/bin/python3 examples/python/dataset_workers.py
fi

echo
echo "== Attach by pid: the debugger comes into a running training loop, stops once, and lets it go"
if [ -z "$py" ]; then
  echo "(skipped: no CPython 3.12 or 3.13 found: pyenv install 3.12)"
else
  start_program "$logs/train.log" "$py" examples/python/slow_train.py --seconds 60
  train=$started
  train_line=$(grep -n "return w - lr \* gw" examples/python/train_loop.py | cut -d: -f1)
  show attach --break "examples/python/train_loop.py:${train_line}:loss < 0.01" "$train"
  sleep 2
  if ! kill -0 "$train" 2>/dev/null; then
    echo "  (process $train is gone; its output:)"
  elif [ "$last_rc" = 0 ]; then
    echo "  (process $train trains on after the detach; its latest output:)"
  else
    echo "  (process $train runs on; its latest output:)"
  fi
  tail -n 3 "$logs/train.log" | sed 's/^/  | /'
  stop_program "$train"
fi

echo
echo "== A session kept between commands: find why buggy_batches.py divides by zero"
if ! "$strata" session --help >/dev/null 2>&1; then
  echo "(skipped: this build has no \`strata session\`)"
else
  name="demo-$$"
  yield_line=$(grep -n "yield samples\[start:start + size\]" examples/python/buggy_batches.py | cut -d: -f1)
  echo
  echo "\$ export STRATA_SESSION=$name"
  export STRATA_SESSION="$name"
  session="$name"
  pick=()
  [ -n "$py" ] && pick=(--python "$py")
  show session start --name "$name" "${pick[@]}" -- examples/python/buggy_batches.py 100
  if [ "$last_rc" != 0 ]; then
    echo "(the session did not start: the rest of this section is skipped)"
  else
    echo
    echo "   The last batch should hold what is left: stop where a batch starts past the end."
    show break "examples/python/buggy_batches.py:${yield_line}:start >= len(samples)"
    show continue
    show locals
    show eval "samples[start:start + size]"
    show next
    echo
    echo "   That empty batch goes on to mean_loss, which divides by its length:"
    show continue
    show stack
    show session end
    [ "$last_rc" = 0 ] && session=""
  fi
  unset STRATA_SESSION
fi

echo
echo "== Demo done"
