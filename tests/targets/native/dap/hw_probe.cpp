// Says whether this machine's debug registers trap ("yes"/"no"), for tests that need hardware
// watchpoints: some hypervisors accept the writes and never fire them.
#include <cstdio>

#include "strata/native/engine/engine.hpp"

int main() {
  auto works = strata::native::engine::hardwareWatchpointsWork();
  if (!works) {
    std::printf("no: %s\n", works.error().message.c_str());
    return 0;
  }
  std::printf("%s\n", *works ? "yes" : "no: the debug registers accept writes but never trap");
  return 0;
}
