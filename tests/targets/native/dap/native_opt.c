// Built -O2: values the compiler keeps nowhere show as optimized out; twice() is inlined.
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void sink(int v) { __asm__ volatile("" ::"r"(v)); }

static inline __attribute__((always_inline)) int twice(int x) {
  sink(x);  // @bp:twice_body
  return x * 2;
}

__attribute__((noinline)) int mix(int a, int b) {
  int scratch = a * 7 + b;
  int kept = twice(scratch) ^ (a << 3);  // @bp:mix_kept
  sink(kept);
  return kept + 1;  // @bp:mix_body
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  int total = 0;
  for (int i = 0; i < n; ++i) total += mix(i, n);
  printf("total %d\n", total);
  return 0;
}
