// doctest main shared by the native test binaries: test cases that need debug registers that
// trap sit in the "hardware-watchpoints" suite; `--hardware-watchpoints` runs only them, and
// exits 77 (ctest's SKIP_RETURN_CODE) with the reason where this machine cannot fire them, so
// the run reports a skip instead of a silent pass. Without the flag that suite is left out.
#pragma once

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "hardware_suite.hpp"
#include "strata/native/engine/engine.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  bool hardware = false;
  for (auto it = args.begin() + 1; it != args.end();)
    if (std::strcmp(*it, "--hardware-watchpoints") == 0) {
      hardware = true;
      it = args.erase(it);
    } else {
      ++it;
    }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  if (hardware) {
    auto works = strata::native::engine::hardwareWatchpointsWork();
    if (!works || !*works) {
      std::printf("SKIPPED: hardware watchpoints: %s\n",
                  works ? "this machine's debug registers accept writes but never trap (some hypervisors)"
                        : works.error().message.c_str());
      return 77;
    }
    context.addFilter("test-suite", kHardwareSuite);
  } else {
    context.addFilter("test-suite-exclude", kHardwareSuite);
  }
  return context.run();
}
