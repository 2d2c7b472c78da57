#!/usr/bin/env bash
# Strata's install footprint: the stripped `cmake --install` tree by part, the .deb, the
# .tar.gz and the wheel, beside the peers' installed sizes on this machine (Debian's packages,
# as dpkg reports them).
#   bench/cli/install_footprint.sh [BUILD_DIR]      (default: build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/release}"
[ -x "$build/adapter/strata-dap" ] || { echo "install_footprint: build $build first (release preset)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --strip --component strata >/dev/null
(cd "$build" && cpack -G "DEB;TGZ" -B "$tmp/pkg" >/dev/null)
scripts/build-wheel.py --build-dir "$build" --out "$tmp/pkg" >/dev/null
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
size() { du -sb "$@" | awk '{ s += $1 } END { print s }'; }
p="$tmp/prefix"
echo "| what | MB |"
echo "| --- | --- |"
echo "| installed tree (\`cmake --install --strip\`), all | $(mb "$(size "$p")") |"
echo "| - bin/strata-dap | $(mb "$(size "$p/bin/strata-dap")") |"
echo "| - bin/strata | $(mb "$(size "$p/bin/strata")") |"
echo "| - lib/strata/deps (carried shared libraries) | $(mb "$(size "$p/lib/strata/deps")") |"
echo "| - lib/strata/python (the agent, $(ls "$p/lib/strata/python/strata" | grep -c '^_strata_core') CPython cores) | $(mb "$(size "$p/lib/strata/python")") |"
if ls "$p"/lib/strata/*.so* >/dev/null 2>&1; then
  echo "| - lib/strata/libstrata_cupti.so + libcupti | $(mb "$(size "$p"/lib/strata/*.so*)") |"
fi
for f in "$tmp"/pkg/*.deb "$tmp"/pkg/*.tar.gz "$tmp"/pkg/*.whl; do
  echo "| $(basename "$f") (download) | $(mb "$(stat -c %s "$f")") |"
done
# Peers, installed sizes as dpkg records them (KiB).
for pkg in gdb lldb-19 python3-debugpy; do
  kib=$(dpkg-query -W -f='${Installed-Size}' "$pkg" 2>/dev/null || true)
  if [ -n "$kib" ]; then echo "| peer: Debian's $pkg, installed (without its dependencies) | $(mb "$((kib * 1024))") |"; else echo "| peer: Debian's $pkg | not installed here |"; fi
done
