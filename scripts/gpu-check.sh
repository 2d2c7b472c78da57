#!/usr/bin/env bash
# The GPU check: what only a machine with a GPU can show, in one prepared script.
#   scripts/gpu-check.sh pack [BUNDLE]   build (release) and pack what the check needs into BUNDLE
#                                        (default build/gpu-check): binaries, the shared libraries
#                                        they load, the CUDA examples, the torch loop, the scripts
#   scripts/gpu-check.sh run [BUNDLE]    on a machine with a GPU, CUDA 13 and PyTorch: the
#                                        collector checks, the CUDA error stops through
#                                        strata-dap, the torch loop through `strata gpu run
#                                        --stacks`, the overhead table; PASS/FAIL/SKIP lines
#   scripts/gpu-check.sh [BUNDLE]        both
# `run` needs nothing from the build machine but the bundle (BUNDLE/gpu-check.sh run works too).
# Without a GPU it stops with "no GPU: ..." and exit status 3. See README.md, "GPU check".
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
if [ -f "$here/BUNDLE" ]; then repo=""; else repo="$(cd "$here/.." && pwd)"; fi

pack() {
  local out="$1"
  [ -n "$repo" ] || { echo "gpu-check: pack runs from a clone of the repository"; exit 2; }
  cd "$repo"
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}" CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  echo "== configure and build (release)"
  cmake --preset release >/dev/null || exit 1
  local targets=(strata strata-dap strata_cupti strata_gpu_dump example_cuda_vector_add example_cuda_streams
                 example_cuda_oob_write example_cuda_launch_loop)
  # The Python agent (strata-dap's Python backend), with its extension for each CPython found.
  targets+=(strata_python_package $(ninja -C build/release -t targets all | awk -F: '/^strata_(core|pyc)_py[0-9]+:/{print $1}'))
  cmake --build --preset release --target "${targets[@]}" -- -j"${JOBS:-2}" || exit 1
  local b=build/release
  rm -rf "$out" && mkdir -p "$out"/{bin,lib,examples,examples-src,tools,bench}
  cp -r "$b/backends/python/python" "$out/agent"
  cp "$b/adapter/cli/strata" "$b/adapter/strata-dap" "$b/backends/cuda/collector/strata_gpu_dump" \
     "$b/backends/cuda/collector/libstrata_cupti.so" "$out/bin/"
  # The collector's version gate wants the CUPTI it was built with (130001): carried beside it.
  local cupti
  cupti="$(grep -E '^STRATA_CUPTI_DIR:' "$b/CMakeCache.txt" | cut -d= -f2)/libcupti.so.13"
  cp -L "$cupti" "$out/bin/libcupti.so.13"
  for e in vector_add streams oob_write launch_loop; do
    cp "$b/examples/cuda/$e" "$out/examples/"
    cp "examples/cuda/$e.cu" "$out/examples-src/"
  done
  cp examples/cuda/check.h "$out/examples-src/"
  # Debug info is for the examples (launch lines); the tools travel without theirs.
  strip --strip-debug "$out/bin/strata" "$out/bin/strata-dap" "$out/bin/strata_gpu_dump" "$out/bin/libstrata_cupti.so"
  # The shared libraries they load, except glibc's own (the GPU machine's must serve them).
  # The C++ runtime goes aside (lib-cxx): used only when the machine's own is older. libunwind
  # and liblzma the collector opens at run time from beside itself ($ORIGIN), then the system.
  mkdir -p "$out/lib-cxx"
  for f in "$out"/bin/*; do ldd "$f" 2>/dev/null | awk '/=> \//{print $3}'; done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*|libcupti.so.*) ;;
      libstdc++.so.*|libgcc_s.so.*) cp -L "$lib" "$out/lib-cxx/" ;;
      *) cp -L "$lib" "$out/lib/" ;;
    esac
  done
  for name in libunwind.so.8 liblzma.so.5; do
    lib="$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')"
    [ -n "$lib" ] && cp -L "$lib" "$out/bin/$name"
  done
  cp backends/cuda/collector/tools/gpu_check_collector.py backends/cuda/collector/tools/late_start.py \
     backends/cuda/collector/tools/check_report.py backends/cuda/collector/tools/gpu_check_metrics.py \
     backends/cuda/collector/tools/gpu_check_error_stop.py backends/cuda/collector/tools/gpu_check_session.py \
     backends/cuda/collector/tools/gpu_check_ranks.py "$out/tools/"
  cp bench/gpu/collection_overhead.py "$out/bench/"
  cp examples/python/train_torch.py examples/distributed/train_ddp.py "$out/"
  cp "$repo/scripts/gpu-check.sh" "$out/gpu-check.sh"
  chmod +x "$out/gpu-check.sh"
  git rev-parse HEAD > "$out/BUNDLE" 2>/dev/null || echo unknown > "$out/BUNDLE"
  echo "== bundle: $out ($(du -sh "$out" | cut -f1); the device machine takes 64 MiB at most)"
}

pass=0 fail=0 skip=0
verdict() {  # verdict PASS|FAIL|SKIP NAME DETAIL
  case "$1" in PASS) pass=$((pass + 1));; FAIL) fail=$((fail + 1));; SKIP) skip=$((skip + 1));; esac
  echo "$1 $2${3:+: $3}"
}

# tool_step NAME SECONDS OUTFILE COMMAND...: one check tool run; its PASS/FAIL/SKIP lines shown
# and counted, running past SECONDS a FAIL of its own.
tool_step() {
  local name="$1" seconds="$2" out="$3" rc
  shift 3
  timeout "$seconds" "$@" > "$out" 2>&1
  rc=$?
  cat "$out"
  pass=$((pass + $(grep -c '^PASS' "$out")))
  fail=$((fail + $(grep -c '^FAIL' "$out")))
  skip=$((skip + $(grep -c '^SKIP' "$out")))
  [ $rc -eq 124 ] && verdict FAIL "$name" "timed out after $seconds s"
  return 0
}

run_checks() {
  local dir
  dir="$(cd "$1" && pwd)" || { echo "gpu-check: no bundle at $1 (run: scripts/gpu-check.sh pack)"; exit 2; }
  [ -x "$dir/bin/strata" ] || { echo "gpu-check: $dir is not a bundle (no bin/strata): run scripts/gpu-check.sh pack first"; exit 2; }
  local started=$SECONDS
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  if ! "$dir/bin/strata" --version >/dev/null 2>&1; then
    # An older C++ runtime than the build machine's: the bundle's own, for everything run here.
    export LD_LIBRARY_PATH="$dir/lib-cxx:$LD_LIBRARY_PATH"
    "$dir/bin/strata" --version >/dev/null 2>&1 || { echo "gpu-check: the bundle's strata does not run here: $("$dir/bin/strata" --version 2>&1 | head -3)"; exit 2; }
    echo "note: this machine's C++ runtime is older than the build machine's: using the bundle's (lib-cxx)"
  fi
  echo "== GPU check from $dir (commit $(cat "$dir/BUNDLE" 2>/dev/null))"

  # Where a GPU is needed the check stops, saying why.
  if [ ! -e /proc/driver/nvidia/version ] && [ ! -e /dev/dxg ]; then
    echo "no GPU: this machine has no NVIDIA driver loaded (/proc/driver/nvidia/version does not exist); the checks need one"
    exit 3
  fi
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/GPU: /'
  fi
  local probe
  probe="$("$dir/examples/launch_loop" 100 2>&1)"
  if ! grep -q "ns per launch" <<<"$probe"; then
    echo "no GPU: a CUDA program cannot launch a kernel here: $probe"
    exit 3
  fi
  local python="${PYTHON:-python3}" work rc
  work="$(mktemp -d /tmp/strata-gpu-check-XXXXXX)"
  echo "work files in $work"
  echo "python: $($python --version 2>&1); torch: $($python -c 'import torch; print(torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1)"

  echo "== the collector (strata_gpu_dump: counts, launch lines, the error stop, late start, overhead)"
  tool_step "collector checks" 240 "$work/collector.out" "$python" "$dir/tools/gpu_check_collector.py" \
      --dump "$dir/bin/strata_gpu_dump" --examples "$dir/examples" --sources "$dir/examples-src" --python "$python" \
      --work "$work/collector"

  echo "== CUDA errors as exception stops through strata-dap (oob_write, a torch out-of-bounds index)"
  tool_step "CUDA error stops" 120 "$work/errors.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_error_stop.py" --dap "$dir/bin/strata-dap" --collector "$dir/bin/libstrata_cupti.so" \
      --examples "$dir/examples" --sources "$dir/examples-src" --python "$python" --work "$work/errors"

  echo "== collection in debug sessions through strata-dap (launch with \"gpu\", a breakpoint, late start)"
  tool_step "session checks" 150 "$work/session.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_session.py" --dap "$dir/bin/strata-dap" --examples "$dir/examples" \
      --sources "$dir/examples-src" --train "$dir/train_torch.py" --python "$python"

  echo "== a job's ranks under torchrun in one debug session (launch with \"ranks\")"
  tool_step "torchrun ranks" 300 "$work/ranks.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_ranks.py" --dap "$dir/bin/strata-dap" --train "$dir/train_ddp.py" --python "$python"

  echo "== hardware metrics: strata gpu run --profile vector_add:2 (measured, or the reason they cannot be)"
  # CUPTI's profiler loads libnvperf_host.so/libnvperf_target.so (37 MB, not in the bundle): the
  # machine's own, from a CUDA toolkit or PyTorch's nvidia wheels, when there is one.
  local nvperf
  nvperf="$(find -H /usr/local/cuda*/lib64 /usr/local/cuda*/extras/CUPTI/lib64 \
      $("$python" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
      -maxdepth 4 -name libnvperf_host.so -print -quit 2>/dev/null)"
  echo "libnvperf_host.so: ${nvperf:-none found (the answer below then names the CUPTI call that failed)}"
  tool_step "hardware metrics" 90 "$work/metrics.out" env LD_LIBRARY_PATH="${nvperf:+$(dirname "$nvperf"):}${LD_LIBRARY_PATH:-}" \
      "$python" "$dir/tools/gpu_check_metrics.py" --strata "$dir/bin/strata" --examples "$dir/examples" \
      --work "$work/metrics"

  echo "== the torch loop through strata gpu run --stacks"
  if ! "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    verdict SKIP "torch loop" "PyTorch with CUDA is not available to $python"
  else
    local store="$work/torch.strata"
    timeout 150 "$dir/bin/strata" gpu run --stacks --store "$store" -- "$python" "$dir/train_torch.py" --steps 100 \
        > "$work/torch.out" 2> "$work/torch.err"
    rc=$?
    tail -n 3 "$work/torch.out"; cat "$work/torch.err"
    if [ $rc -ne 0 ] || ! grep -q "steps on cuda" "$work/torch.out"; then
      verdict FAIL "torch loop ran on the GPU" "exit $rc"
    else
      verdict PASS "torch loop ran on the GPU" "$(grep 'steps on cuda' "$work/torch.out")"
      local kernels lines marked
      kernels="$("$dir/bin/strata" gpu sql "SELECT count(*) FROM kernels" --json "$store" | "$python" -c 'import json,sys; print(json.load(sys.stdin)["rows"][0][0])')"
      [ "${kernels:-0}" -gt 0 ] && verdict PASS "torch kernels recorded" "$kernels kernels" || verdict FAIL "torch kernels recorded" "${kernels:-none}"
      # Per launch site, its innermost frame in train_torch.py (the outer ones are main's caller).
      lines="$("$dir/bin/strata" gpu sql "SELECT DISTINCT f.line FROM site_frames f JOIN (SELECT pid, site, min(depth) AS d FROM site_frames WHERE kind = 'python' AND file LIKE '%train_torch.py' GROUP BY pid, site) m ON f.pid = m.pid AND f.site = m.site AND f.depth = m.d AND f.kind = 'python' ORDER BY f.line" --json "$store" | "$python" -c 'import json,sys; print(" ".join(str(r[0]) for r in json.load(sys.stdin)["rows"]))')"
      marked="$(grep -n '# @gpu:' "$dir/train_torch.py" | cut -d: -f1 | tr '\n' ' ')"
      local ok=1 l
      [ -n "$lines" ] || ok=0
      for l in $lines; do grep -qw "$l" <<<"$marked" || ok=0; done
      [ $ok -eq 1 ] && verdict PASS "torch launch lines in train_torch.py" "lines $lines (marked: $marked)" \
                    || verdict FAIL "torch launch lines in train_torch.py" "lines '${lines}' should be among the marked lines $marked"
      "$dir/bin/strata" gpu top 5 "$store" | head -n 12
    fi
  fi

  echo "== collection overhead (bench/gpu/collection_overhead.py)"
  timeout 90 "$python" "$dir/bench/collection_overhead.py" --strata "$dir/bin/strata" --loop "$dir/examples/launch_loop" --rounds 3
  rc=$?
  [ $rc -eq 0 ] || verdict FAIL "overhead bench" "exit $rc"

  echo "== GPU check: $pass PASS, $fail FAIL, $skip SKIP in $((SECONDS - started)) s"
  [ $fail -eq 0 ]
}

if [ -n "$repo" ]; then default_bundle="$repo/build/gpu-check"; else default_bundle="$here"; fi
case "${1:-}" in
  pack) pack "${2:-$default_bundle}" ;;
  run) run_checks "${2:-$default_bundle}" ;;
  -h|--help) sed -n '2,11p' "$0" ;;
  *) pack "${1:-$default_bundle}" && run_checks "${1:-$default_bundle}" ;;
esac
