// Debuggee for the breakpoint benchmark: calls tick() argv[1] times (default 100000).
#include <stdlib.h>

volatile long counter = 0;

__attribute__((noinline)) void tick(void) {  // @bp:tick
  counter++;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  for (long i = 0; i < n; ++i) tick();
  return 0;
}
