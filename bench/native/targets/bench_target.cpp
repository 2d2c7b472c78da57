// Debuggee of the native benchmarks (built -g -O0). Modes:
//   hot N [FILE]        N passes over the hot line (a false-condition breakpoint goes there);
//                       with FILE, writes the loop's own duration (CLOCK_MONOTONIC, ns) there,
//                       so every debugger is timed from the same start to the same end
//   nth N [PAUSE_MS]    sleeps PAUSE_MS, then N passes; each stamps `stamp_ns` (CLOCK_REALTIME)
//                       just before the line, so a debugger stopped there can tell how long
//                       ago the program reached it
//   stops N PAUSE_MS    sleeps PAUSE_MS, then N passes over the stop line, stamped the same way
//   deep D              recursion D deep, then the base-case line
//   vector N            a std::vector<int> of N elements, then the vector line
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

volatile long sink_value = 0;
volatile long long stamp_ns = 0;

static long long now_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void pause_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
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
    long long t0 = now_ns(CLOCK_MONOTONIC);
    for (long i = 0; i < n; ++i) {
      sink_value = sink_value + i;  // @bp:hot
    }
    long long loop = now_ns(CLOCK_MONOTONIC) - t0;
    if (argc > 3) {
      FILE* f = std::fopen(argv[3], "w");
      if (!f) return 2;
      std::fprintf(f, "%lld\n", loop);
      std::fclose(f);
    }
  } else if (std::strcmp(mode, "nth") == 0) {
    pause_ms(argc > 3 ? std::atol(argv[3]) : 0);
    for (long i = 0; i < n; ++i) {
      stamp_ns = now_ns(CLOCK_REALTIME);
      sink_value = sink_value + i;  // @bp:nth
    }
  } else if (std::strcmp(mode, "stops") == 0) {
    pause_ms(argc > 3 ? std::atol(argv[3]) : 0);
    for (long k = 0; k < n; ++k) {
      stamp_ns = now_ns(CLOCK_REALTIME);
      sink_value = sink_value + k;  // @bp:stop
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
