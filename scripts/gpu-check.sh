#!/usr/bin/env bash
# The GPU check: what only a machine with a GPU can show, in one prepared script.
#   scripts/gpu-check.sh pack [BUNDLE]   build (release) and pack what the check needs into BUNDLE
#                                        (default build/gpu-check): binaries, the shared libraries
#                                        they load, the CUDA examples, the torch loop, the scripts
#   scripts/gpu-check.sh run [BUNDLE]    on a machine with a GPU, CUDA 13 and PyTorch: the
#                                        collector checks, the CUDA error stops through
#                                        strata-dap, the torch loop and a CUDA graph through
#                                        `strata gpu run --stacks`, the overhead table; it
#                                        ends with one table (every item PASS/FAIL/SKIP, the
#                                        overhead rows) and takes under 4 minutes
#   scripts/gpu-check.sh [BUNDLE]        both
# STRATA_PACK_BUILD_DIR=DIR packs that build as it is instead (the packing test's).
# `run` needs nothing from the build machine but the bundle (BUNDLE/gpu-check.sh run works too).
# Without a GPU it stops with "no GPU: ..." and exit status 3. See README.md, "GPU check".
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
if [ -f "$here/BUNDLE" ]; then repo=""; else repo="$(cd "$here/.." && pwd)"; fi

pack() {
  local out="$1"
  [ -n "$repo" ] || { echo "gpu-check: pack runs from a clone of the repository"; exit 2; }
  cd "$repo"
  # ccache where the machine has it (scripts/setup.sh does not install it): a fresh machine
  # builds without, and no launcher is left in build/release's cache.
  if command -v ccache >/dev/null 2>&1; then
    export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}" CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  fi
  command -v patchelf >/dev/null || { echo "gpu-check: patchelf is missing (scripts/setup.sh installs it)"; exit 1; }
  local b="${STRATA_PACK_BUILD_DIR:-}"
  if [ -n "$b" ]; then
    # A build that is already made (the packing test's): taken as it is, nothing rebuilt.
    echo "== packing $b as it is"
  else
    echo "== configure and build (release)"
    cmake --preset release >/dev/null || exit 1
    local targets=(strata strata-dap strata_cupti strata_cupti_floor strata_gpu_dump example_cuda_vector_add example_cuda_streams
                   example_cuda_oob_write example_cuda_launch_loop)
    # The Python agent (strata-dap's Python backend), with its extension for each CPython found.
    targets+=(strata_python_package $(ninja -C build/release -t targets all | awk -F: '/^strata_(core|pyc)_py[0-9]+:/{print $1}'))
    cmake --build --preset release --target "${targets[@]}" -- -j"${JOBS:-2}" || exit 1
    b=build/release
  fi
  rm -rf "$out" && mkdir -p "$out"/{bin,lib,examples,examples-src,tools,bench}
  cp -r "$b/backends/python/python" "$out/agent"
  # The floor of the overhead bench (CUPTI's kernel tracing alone) beside the collector: its
  # $ORIGIN RUNPATH finds the bundle's libcupti.so.13 there too.
  cp "$b/adapter/cli/strata" "$b/adapter/strata-dap" "$b/backends/cuda/collector/strata_gpu_dump" \
     "$b/backends/cuda/collector/libstrata_cupti.so" "$b/bench/gpu/libstrata_cupti_floor.so" "$out/bin/" || exit 1
  # The collector's version gate wants the CUPTI it was built with (130001): carried beside it.
  local cupti
  cupti="$(grep -E '^STRATA_CUPTI_DIR:' "$b/CMakeCache.txt" | cut -d= -f2)/libcupti.so.13"
  cp -L "$cupti" "$out/bin/libcupti.so.13" || exit 1
  for e in vector_add streams oob_write launch_loop; do
    cp "$b/examples/cuda/$e" "$out/examples/" || exit 1
    cp "examples/cuda/$e.cu" "$out/examples-src/"
  done
  cp examples/cuda/check.h "$out/examples-src/"
  # Debug info is for the examples (launch lines); the tools travel without theirs.
  strip --strip-debug "$out/bin/strata" "$out/bin/strata-dap" "$out/bin/strata_gpu_dump" "$out/bin/libstrata_cupti.so" \
      "$out/bin/libstrata_cupti_floor.so"
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
  # The binaries find the bundle's libraries themselves (RUNPATH), with no LD_LIBRARY_PATH: the
  # tools in lib/ beside bin/, the libraries there each other; the collector keeps its own
  # ($ORIGIN first: its libcupti and libunwind beside it).
  for f in "$out"/bin/strata "$out"/bin/strata-dap "$out"/bin/strata_gpu_dump; do
    patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN' "$f" || exit 1
  done
  for f in "$out"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$f" || exit 1; done
  cp backends/cuda/collector/tools/gpu_check_collector.py backends/cuda/collector/tools/late_start.py \
     backends/cuda/collector/tools/check_report.py backends/cuda/collector/tools/gpu_check_metrics.py \
     backends/cuda/collector/tools/gpu_check_error_stop.py backends/cuda/collector/tools/gpu_check_session.py \
     backends/cuda/collector/tools/gpu_check_ranks.py backends/cuda/collector/tools/gpu_check_torch.py "$out/tools/"
  cp bench/gpu/collection_overhead.py bench/gpu/torch_tiny_ops.py "$out/bench/"
  cp examples/python/train_torch.py examples/distributed/train_ddp.py "$out/"
  cp "$repo/scripts/gpu-check.sh" "$out/gpu-check.sh"
  chmod +x "$out/gpu-check.sh"
  git rev-parse HEAD > "$out/BUNDLE" 2>/dev/null || echo unknown > "$out/BUNDLE"
  echo "== bundle: $out ($(du -sh "$out" | cut -f1); the device machine takes 64 MiB at most)"
}

pass=0 fail=0 skip=0
summary=()  # one "VERDICT|NAME|DETAIL" per item, for the table at the end
verdict() {  # verdict PASS|FAIL|SKIP NAME DETAIL
  case "$1" in PASS) pass=$((pass + 1));; FAIL) fail=$((fail + 1));; SKIP) skip=$((skip + 1));; esac
  echo "$1 $2${3:+: $3}"
  summary+=("$1|$2|${3:-}")
}

# tool_step NAME SECONDS OUTFILE COMMAND...: one check tool run; its PASS/FAIL/SKIP lines shown
# and counted, running past SECONDS a FAIL of its own.
tool_step() {
  local name="$1" seconds="$2" out="$3" rc line v rest
  shift 3
  timeout "$seconds" "$@" > "$out" 2>&1
  rc=$?
  cat "$out"
  while IFS= read -r line; do
    case "$line" in PASS\ *|FAIL\ *|SKIP\ *) ;; *) continue ;; esac
    v="${line%% *}"
    rest="${line#* }"
    case "$v" in PASS) pass=$((pass + 1));; FAIL) fail=$((fail + 1));; SKIP) skip=$((skip + 1));; esac
    if [[ "$rest" == *": "* ]]; then summary+=("$v|${rest%%: *}|${rest#*: }"); else summary+=("$v|$rest|"); fi
  done < "$out"
  [ $rc -eq 124 ] && verdict FAIL "$name" "timed out after $seconds s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q '^FAIL' "$out" && verdict FAIL "$name" "exit $rc without a FAIL line (see above)"
  return 0
}

run_checks() {
  local dir
  dir="$(cd "$1" && pwd)" || { echo "gpu-check: no bundle at $1 (run: scripts/gpu-check.sh pack)"; exit 2; }
  [ -x "$dir/bin/strata" ] || { echo "gpu-check: $dir is not a bundle (no bin/strata): run scripts/gpu-check.sh pack first"; exit 2; }
  local started=$SECONDS
  # The bundle's binaries find its libraries through their RUNPATH; LD_LIBRARY_PATH only for an
  # older C++ runtime than the build machine's.
  if ! "$dir/bin/strata" --version >/dev/null 2>&1; then
    export LD_LIBRARY_PATH="$dir/lib-cxx${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
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
  local python="${PYTHON:-python3}" work
  work="$(mktemp -d /tmp/strata-gpu-check-XXXXXX)"
  mkdir -p "$work"/{collector,errors,session,ranks,metrics,torch}
  echo "work files in $work"
  echo "python: $($python --version 2>&1); torch: $($python -c 'import torch; print(torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tail -1)"

  echo "== the collector (strata_gpu_dump: counts, launch lines, the error stop, late start)"
  tool_step "collector checks" 60 "$work/collector.out" "$python" "$dir/tools/gpu_check_collector.py" \
      --dump "$dir/bin/strata_gpu_dump" --examples "$dir/examples" --sources "$dir/examples-src" --python "$python" \
      --work "$work/collector"

  echo "== CUDA errors as exception stops through strata-dap (oob_write, a torch out-of-bounds index)"
  tool_step "CUDA error stops" 45 "$work/errors.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_error_stop.py" --dap "$dir/bin/strata-dap" --collector "$dir/bin/libstrata_cupti.so" \
      --examples "$dir/examples" --sources "$dir/examples-src" --python "$python" --work "$work/errors"

  echo "== collection in debug sessions through strata-dap (launch with \"gpu\", a breakpoint, late start)"
  tool_step "session checks" 60 "$work/session.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_session.py" --dap "$dir/bin/strata-dap" --examples "$dir/examples" \
      --sources "$dir/examples-src" --train "$dir/train_torch.py" --python "$python"

  echo "== PyTorch through strata gpu run --stacks (the loop's launch lines, backward, a CUDA graph)"
  tool_step "torch checks" 45 "$work/torch.out" "$python" "$dir/tools/gpu_check_torch.py" --strata "$dir/bin/strata" \
      --train "$dir/train_torch.py" --python "$python" --work "$work/torch"

  echo "== a job's ranks under torchrun in one debug session (launch with \"ranks\")"
  tool_step "torchrun ranks" 60 "$work/ranks.out" env STRATA_AGENT_PYTHONPATH="$dir/agent" "$python" \
      "$dir/tools/gpu_check_ranks.py" --dap "$dir/bin/strata-dap" --train "$dir/train_ddp.py" --python "$python"

  echo "== hardware metrics: strata gpu run --profile vector_add:2 (measured, or the reason they cannot be)"
  # CUPTI's profiler loads libnvperf_host.so/libnvperf_target.so (37 MB, not in the bundle): the
  # machine's own, from a CUDA toolkit or PyTorch's nvidia wheels, when there is one.
  local nvperf
  nvperf="$(find -H /usr/local/cuda*/lib64 /usr/local/cuda*/extras/CUPTI/lib64 \
      $("$python" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
      -maxdepth 4 -name libnvperf_host.so -print -quit 2>/dev/null)"
  echo "libnvperf_host.so: ${nvperf:-none found (the answer below then names the CUPTI call that failed)}"
  tool_step "hardware metrics" 25 "$work/metrics.out" env LD_LIBRARY_PATH="${nvperf:+$(dirname "$nvperf"):}${LD_LIBRARY_PATH:-}" \
      "$python" "$dir/tools/gpu_check_metrics.py" --strata "$dir/bin/strata" --examples "$dir/examples" \
      --work "$work/metrics"

  echo "== collection overhead (bench/gpu/collection_overhead.py: the CUPTI floor, torch.profiler, Strata's modes)"
  local budget=$((235 - (SECONDS - started)))
  [ $budget -lt 30 ] && budget=30
  timeout $((budget + 5)) "$python" "$dir/bench/collection_overhead.py" --strata "$dir/bin/strata" \
      --loop "$dir/examples/launch_loop" --floor "$dir/bin/libstrata_cupti_floor.so" --python "$python" \
      --torch-script "$dir/bench/torch_tiny_ops.py" --timeout-total "$budget" --rounds 2 \
      --floor-kinds kernel+memcpy+memset+sync --variant api-launches:STRATA_GPU_API=launches \
      --variant errors-all:STRATA_GPU_ERRORS=all > "$work/overhead.out" 2>&1
  local rc=$?
  cat "$work/overhead.out"
  [ $rc -eq 0 ] && verdict PASS "overhead bench" "tables below" || verdict FAIL "overhead bench" "exit $rc"

  local elapsed=$((SECONDS - started))
  [ $elapsed -le 240 ] && verdict PASS "the whole check in under 4 minutes" "$elapsed s" \
                       || verdict FAIL "the whole check in under 4 minutes" "$elapsed s"
  echo
  echo "== GPU check: $pass PASS, $fail FAIL, $skip SKIP in $elapsed s (commit $(cat "$dir/BUNDLE" 2>/dev/null))"
  echo
  echo "| # | check | result | detail |"
  echo "| ---: | --- | --- | --- |"
  local i=0 row v name detail
  for row in "${summary[@]}"; do
    i=$((i + 1))
    v="${row%%|*}"; row="${row#*|}"
    name="${row%%|*}"; detail="${row#*|}"
    detail="${detail//|/\\|}"
    echo "| $i | $name | $v | ${detail:0:240} |"
  done
  echo
  grep -E '^\|' "$work/overhead.out" || echo "(no overhead table: see the bench's output above)"
  [ $fail -eq 0 ]
}

if [ -n "$repo" ]; then default_bundle="$repo/build/gpu-check"; else default_bundle="$here"; fi
case "${1:-}" in
  pack) pack "${2:-$default_bundle}" ;;
  run) run_checks "${2:-$default_bundle}" ;;
  -h|--help) sed -n '2,11p' "$0" ;;
  *) pack "${1:-$default_bundle}" && run_checks "${1:-$default_bundle}" ;;
esac
