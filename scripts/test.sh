#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: unit and end-to-end tests under
# ASan+UBSan, and bounded libFuzzer runs over the protocol decoder and a whole session.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh asan fuzz
echo "== tests (asan)"
ctest --preset asan -j"$(nproc)"
echo "== fuzzing (bounded)"
ctest --preset fuzz
