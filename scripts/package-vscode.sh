#!/usr/bin/env bash
# Packages the VS Code extension for linux-x64 with strata-dap, the Python agent and the CUDA
# collector (when built) inside: build/strata-linux-x64.vsix.
#   scripts/package-vscode.sh [--build-dir DIR] [--stage DIR] [--out FILE]
# Without --build-dir it builds the release preset's targets first (incrementally); with it,
# it takes what DIR holds as it is. The extension is staged in vscode-extension/ itself
# (dist/linux-x64/, out/) unless --stage names another folder, which gets a copy of it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

build_dir="" stage="$repo/vscode-extension" out="$repo/build/strata-linux-x64.vsix"
while (($#)); do
  case "$1" in
    --build-dir) build_dir="$(cd "$2" && pwd)"; shift 2 ;;
    --stage) mkdir -p "$2"; stage="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "package-vscode: unknown argument $1 (see the script's first lines)" >&2; exit 2 ;;
  esac
done
ext="$repo/vscode-extension"

# The extension's build tools, from its lockfile (as scripts/setup.sh does).
stamp="$ext/node_modules/.strata-lock"
if [ ! -f "$stamp" ] || ! cmp -s "$ext/package-lock.json" "$stamp"; then
  echo "== npm ci (vscode-extension)"
  (cd "$ext" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$ext/package-lock.json" "$stamp"
fi

if [ -z "$build_dir" ]; then
  # ccache where the machine has it (scripts/setup.sh does not install it): a fresh machine
  # builds without, and no launcher is left in build/release's cache.
  if command -v ccache >/dev/null 2>&1; then
    export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}" CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  fi
  echo "== configure and build (release)"
  cmake --preset release >/dev/null
  build_dir="$repo/build/release"
  targets=(strata-dap strata_python_package)
  # The agent's extension module for each CPython the build found.
  targets+=($(ninja -C "$build_dir" -t targets all | awk -F: '/^strata_(core|pyc)_py[0-9]+:/{print $1}'))
  grep -q '^STRATA_HAVE_CUPTI:INTERNAL=ON' "$build_dir/CMakeCache.txt" && targets+=(strata_cupti)
  cmake --build "$build_dir" --target "${targets[@]}" -- -j"${JOBS:-2}"
fi
adapter="$build_dir/adapter/strata-dap"
agent="$build_dir/backends/python/python"
collector="$build_dir/backends/cuda/collector/libstrata_cupti.so"
[ -x "$adapter" ] || { echo "package-vscode: no strata-dap in $build_dir (build it first)" >&2; exit 1; }
[ -f "$agent/strata/__main__.py" ] || { echo "package-vscode: no Python agent in $agent (build strata_python_package)" >&2; exit 1; }

if [ "$stage" != "$ext" ]; then
  # A copy of the extension's own files (not its node_modules, build outputs or tests).
  rm -rf "$stage" && mkdir -p "$stage"
  (cd "$ext" && tar --exclude=./node_modules --exclude=./out --exclude=./dist --exclude=./test -cf - .) | tar -C "$stage" -xf -
fi

echo "== stage strata-dap, the agent and the collector in $stage/dist/linux-x64"
dist="$stage/dist/linux-x64"
rm -rf "$stage/dist" "$stage/out"
mkdir -p "$dist/bin" "$dist/lib/strata"
cp "$adapter" "$dist/bin/strata-dap"
(cd "$agent" && tar --exclude=__pycache__ --exclude='*.pyc' -cf - strata) | tar -C "$dist/lib/strata" -xf -
mv "$dist/lib/strata/strata" "$dist/lib/strata/python.tmp" && mkdir "$dist/lib/strata/python" &&
  mv "$dist/lib/strata/python.tmp" "$dist/lib/strata/python/strata"
if [ -f "$collector" ]; then
  cp "$collector" "$dist/lib/strata/"
  # The collector's version gate wants the CUPTI it was built with; it looks beside itself first.
  cupti_dir="$(grep -E '^STRATA_CUPTI_DIR:' "$build_dir/CMakeCache.txt" | cut -d= -f2 || true)"
  for f in "$cupti_dir"/libcupti.so.[0-9]*; do
    [ -f "$f" ] && case "$f" in *.so.[0-9][0-9]) cp -L "$f" "$dist/lib/strata/" ;; esac
  done
  strip --strip-debug "$dist/lib/strata/libstrata_cupti.so"
else
  echo "   (no libstrata_cupti.so in $build_dir: this vsix collects no GPU activity; traces still open)"
fi
strip --strip-debug "$dist/bin/strata-dap"
# The shared libraries strata-dap loads except the C library's own, found through its RPATH
# (DT_RPATH reaches their own dependencies too), so it runs where Debian's are not installed.
ldd "$adapter" | awk '/=> \//{print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*) ;;
    *) cp -L "$lib" "$dist/lib/" ;;
  esac
done
patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$dist/bin/strata-dap"
"$dist/bin/strata-dap" --version >/dev/null || { echo "package-vscode: the staged strata-dap does not run" >&2; exit 1; }

if [ -d "$ext/webview" ]; then
  [ "$stage" = "$ext" ] || cp -r "$ext/webview" "$stage/"
else
  echo "   (no vscode-extension/webview/: the GPU panel will say its files are missing)"
fi

echo "== compile the TypeScript"
"$ext/node_modules/.bin/tsc" -p "$ext/tsconfig.json" --outDir "$stage/out"

echo "== vsce package"
mkdir -p "$(dirname "$out")"
out="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
# No runtime dependencies (nothing from node_modules goes in); no LICENSE file or repository URL yet.
(cd "$stage" && "$ext/node_modules/.bin/vsce" package --target linux-x64 --no-dependencies --skip-license \
   --allow-missing-repository --out "$out")
echo "$out"
