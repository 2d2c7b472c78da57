#!/usr/bin/env bash
# The GPU check's bundle packed from a build of this machine (scripts/gpu-check.sh pack, with
# STRATA_PACK_BUILD_DIR: nothing rebuilt), as a GPU machine receives it: made without ccache,
# its tools starting with no LD_LIBRARY_PATH (their RUNPATH finds the bundle's libraries), the
# collector and the floor beside their libcupti, and `run` stopping with "no GPU" (exit 3)
# where there is no GPU. Prints one line per check; exits 1 on the first that fails.
#   tests/scripts/gpu_check_pack.sh BUILD_DIR
set -uo pipefail
build="$1"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/strata-pack-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL $*"; exit 1; }

# No ccache on the PATH (a fresh machine has none): the pack must not need it.
nocache="$work/path"
mkdir -p "$nocache"
for t in cmake ninja patchelf strip ldd ldconfig awk grep cut sort cp mkdir rm du git tar chmod basename dirname; do
  p="$(command -v "$t")" && ln -s "$p" "$nocache/$t"
done
out="$work/bundle"
PATH="$nocache:/usr/bin:/bin" STRATA_PACK_BUILD_DIR="$build" "$repo/scripts/gpu-check.sh" pack "$out" > "$work/pack.log" 2>&1 \
  || { cat "$work/pack.log"; fail "pack exited $?"; }
tail -n 1 "$work/pack.log"
echo "PASS packed without ccache"

for f in strata strata-dap strata_gpu_dump; do
  rpath="$(patchelf --print-rpath "$out/bin/$f")"
  [ "$rpath" = '$ORIGIN/../lib:$ORIGIN' ] || fail "$f's RUNPATH is '$rpath'"
done
for f in libstrata_cupti.so libstrata_cupti_floor.so; do
  [[ "$(patchelf --print-rpath "$out/bin/$f")" == '$ORIGIN'* ]] || fail "$f does not look beside itself for libcupti"
  [ -f "$out/bin/libcupti.so.13" ] || fail "no libcupti.so.13 beside the collector"
done
echo "PASS RUNPATH of the tools and the collectors"

v="$(env -u LD_LIBRARY_PATH "$out/bin/strata" --version 2>&1)" || fail "bin/strata does not start without LD_LIBRARY_PATH: $v"
[[ "$v" == strata\ * ]] || fail "bin/strata --version said '$v'"
v="$(env -u LD_LIBRARY_PATH "$out/bin/strata-dap" --version 2>&1)" || fail "bin/strata-dap does not start: $v"
missing="$(env -u LD_LIBRARY_PATH ldd "$out/bin/strata" "$out/bin/strata-dap" "$out/bin/strata_gpu_dump" | grep 'not found')"
[ -z "$missing" ] || fail "libraries not found: $missing"
echo "PASS the bundle's tools start with no LD_LIBRARY_PATH"

for t in gpu_check_collector gpu_check_error_stop gpu_check_session gpu_check_torch gpu_check_ranks gpu_check_metrics; do
  [ -f "$out/tools/$t.py" ] || fail "tools/$t.py is not in the bundle"
done
[ -f "$out/bench/collection_overhead.py" ] && [ -f "$out/bench/torch_tiny_ops.py" ] || fail "the overhead bench is not in the bundle"
echo "PASS the check's tools and the overhead bench are in the bundle"

if [ -e /proc/driver/nvidia/version ] || [ -e /dev/dxg ]; then
  echo "STRATA-SKIP gpu_check_pack: run without a GPU: this machine has an NVIDIA driver (the check would run)"
  exit 0
fi
said="$(env -u LD_LIBRARY_PATH "$out/gpu-check.sh" run 2>&1)"
rc=$?
[ $rc -eq 3 ] || fail "run exited $rc: $said"
grep -q '^no GPU: this machine has no NVIDIA driver loaded' <<<"$said" || fail "run said: $said"
echo "PASS run stops with 'no GPU' (exit 3) here"
