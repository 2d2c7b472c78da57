// strata_gpu_error_stop: the function the native engine puts its breakpoint on. A file of its
// own so the library exports it (symbols from its static parts are hidden) and tests link it.
#include "strata/strata_gpu.h"

extern "C" __attribute__((noinline, visibility("default"))) void strata_gpu_error_stop(const StrataGpuError* error) {
  // The asm keeps the call and its argument from being optimized away.
  asm volatile("" : : "r"(error) : "memory");
}
