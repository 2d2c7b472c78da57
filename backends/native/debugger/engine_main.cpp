// strata-engine: the ptrace engine in a process of its own, started by strata-dap (one per native
// program) with one end of a socket pair as --fd. Not a command for people: it speaks only the
// engine protocol (backends/native/debugger/wire.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "strata/native/debugger/engine_process.hpp"

int main(int argc, char** argv) {
  int fd = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fd") == 0 && i + 1 < argc) {
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (end != nullptr && *end == '\0' && v >= 0 && v < 65536) fd = static_cast<int>(v);
    }
  }
  if (fd < 0) {
    std::fprintf(stderr,
                 "usage: strata-engine --fd N\n"
                 "strata-dap starts this program for each native program it debugs; it holds ptrace and\n"
                 "lets the program go if strata-dap goes away.\n");
    return 2;
  }
  return strata::native::debugger::serveEngine(fd);
}
