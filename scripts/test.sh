#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and runs every test: unit and end-to-end tests under
# ASan+UBSan, and bounded libFuzzer runs over the protocol decoder and a whole session. Ends
# with a summary: counts per suite and every skip with its reason (scripts/test_summary.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh asan fuzz
# Every temporary file of the run goes under one directory, removed at the end, so that repeated
# runs (and programs a failed case left behind) do not fill the disk.
TMPDIR="$(mktemp -d "${TMPDIR:-/tmp}/strata-tests-XXXXXX")"
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
status=0
echo "== tests (asan)"
# Whole outputs in the JUnit file: the summary reads each suite's counts and skips from them.
full=(--test-output-size-passed 8000000 --test-output-size-failed 8000000)
ctest --preset asan -j"$(nproc)" "${full[@]}" --output-junit "$PWD/build/asan/ctest-junit.xml" || status=1
echo "== fuzzing (bounded)"
ctest --preset fuzz "${full[@]}" --output-junit "$PWD/build/fuzz/ctest-junit.xml" || status=1
python3 scripts/test_summary.py build/asan/ctest-junit.xml build/fuzz/ctest-junit.xml || status=1
exit $status
