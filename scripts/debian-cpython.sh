#!/usr/bin/env bash
# Fetches Debian's own build of a CPython newer than the machine's (default 3.14, from sid),
# verified by apt against Debian's archive keys, into build/cpython3.N/, and makes it run here:
# its binary's dynamic linker and library path point at the sid C library that comes with it.
# The tests use it where the features under test need that CPython (PEP 768 attach on 3.14).
# Safe to run again: nothing is fetched when build/cpython3.N/usr/bin/python3.N runs.
#   scripts/debian-cpython.sh [3.N]
# Prints a line and exits 0 when Debian's archive cannot be reached: for 3.14 the test run then
# fails at python_314_interpreter, saying so (STRATA_SKIP_MISSING_PYTHONS=1 makes it a skip).
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-3.14}"
prefix="$PWD/build/cpython$version"
py="$prefix/usr/bin/python$version"

if [ -x "$py" ] && "$py" -c 'import sys, ctypes, socket, json' >/dev/null 2>&1; then
  exit 0
fi
echo "== Debian's CPython $version (sid) into build/cpython$version"
command -v patchelf >/dev/null || { echo "   patchelf is missing (scripts/setup.sh installs it)"; exit 0; }

# apt with a state of its own: only sid's lists, nothing of the machine's apt touched.
apt_dir="$prefix.apt"
rm -rf "$prefix" "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
  > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Dir::State::status=/dev/null
  -o Debug::NoLocking=1 -o APT::Architecture=amd64 -o Acquire::Languages=none -o APT::Sandbox::User=root)
if ! apt-get "${apt_opts[@]}" -qq update >/dev/null 2>"$apt_dir/update.log"; then
  echo "   Debian's archive cannot be reached (see $apt_dir/update.log): no CPython $version; its tests will say so"
  exit 0
fi
# The interpreter, its standard library, and the sid libraries they were built against.
packages=("python$version-minimal" "libpython$version-minimal" "libpython$version-stdlib"
  libc6 libexpat1 zlib1g libssl3t64 libffi8 libzstd1 liblzma5 libbz2-1.0 libuuid1)
if ! (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "${packages[@]}" >/dev/null 2>"$apt_dir/download.log"); then
  echo "   cannot download CPython $version from sid (see $apt_dir/download.log); its tests will say so"
  exit 0
fi
for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
libs="$prefix/usr/lib/x86_64-linux-gnu"
patchelf --set-interpreter "$libs/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$libs" "$py"
rm -rf "$apt_dir"
"$py" -c 'import sys; print("   " + sys.version.split()[0], sys.executable)'
