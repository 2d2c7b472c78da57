#!/usr/bin/env bash
# Builds Strata's packages from a release build: a .deb (installs under /usr), a relocatable
# .tar.gz (unpack anywhere) and the wheel (pip install into a venv), into build/packages/.
#   scripts/package.sh [--build-dir DIR]     (default: build/release, configured and built if needed)
# Each carries strata, strata-dap, the Python agent (its core for every CPython the build found),
# the GPU collector when the build has it, and the shared libraries the programs load except
# the C library's own (they need glibc 2.36 or newer).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    *) echo "package: unknown argument $1 (see the script's first lines)" >&2; exit 2 ;;
  esac
done
if [ -z "$build_dir" ]; then
  build_dir=build/release
  [ -f "$build_dir/CMakeCache.txt" ] || cmake --preset release >/dev/null
  cmake --build "$build_dir" -- -j"${JOBS:-2}"
fi
out="$(pwd)/build/packages"
mkdir -p "$out"
echo "== cpack: .deb and .tar.gz"
(cd "$build_dir" && cpack -G "DEB;TGZ" -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
echo "== the wheel"
scripts/build-wheel.py --build-dir "$build_dir" --out "$out" >/dev/null
ls -l "$out"/*.deb "$out"/*.tar.gz "$out"/*.whl | awk '{printf "   %s  %.1f MB\n", $NF, $5 / 1e6}'
