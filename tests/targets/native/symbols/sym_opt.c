/* Test target built -O2: values the compiler optimized out, and an inlined call frame. */
#include <signal.h>

volatile int g_sink;

__attribute__((noinline)) int helper(int v) {
  g_sink = v;
  return v + 1;
}

static inline int stop_inside(int x) {
  raise(SIGTRAP); /* @bp:inlined */
  return x + g_sink;
}

__attribute__((noinline)) int work(int n) {
  int scaled = n * 3;
  int r = helper(scaled);
  r += stop_inside(r);
  return r + 1;
}

int main(int argc, char** argv) {
  (void)argv;
  return work(argc + 4) > 0 ? 0 : 1;
}
