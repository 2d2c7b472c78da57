// Debuggee of the native benchmarks (built -g -O0). Modes:
//   hot N     N passes over the hot line (a false-condition breakpoint goes there)
//   nth N     N passes; each stamps `stamp_ns` (CLOCK_MONOTONIC) just before the hot line, so
//             a debugger stopped there can tell how long ago the program reached it
//   deep D    recursion D deep, then the base-case line
//   vector N  a std::vector<int> of N elements, then the vector line
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <vector>

volatile long sink_value = 0;
volatile long long stamp_ns = 0;

static long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) long descend(int depth) {
  if (depth == 0) {
    sink_value = sink_value + 1;  // @bp:deep
    return 0;
  }
  return descend(depth - 1) + 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "hot";
  long n = argc > 2 ? std::atol(argv[2]) : 1000000;
  if (std::strcmp(mode, "hot") == 0) {
    for (long i = 0; i < n; ++i) {
      sink_value = sink_value + i;  // @bp:hot
    }
  } else if (std::strcmp(mode, "nth") == 0) {
    for (long i = 0; i < n; ++i) {
      stamp_ns = now_ns();
      sink_value = sink_value + i;  // @bp:nth
    }
  } else if (std::strcmp(mode, "deep") == 0) {
    descend(static_cast<int>(n));
  } else if (std::strcmp(mode, "vector") == 0) {
    std::vector<int> big(static_cast<std::size_t>(n));
    for (long i = 0; i < n; ++i) big[static_cast<std::size_t>(i)] = static_cast<int>(i);
    sink_value = static_cast<long>(big.size());  // @bp:vector
  }
  return 0;
}
