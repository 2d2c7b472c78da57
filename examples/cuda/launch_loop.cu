// A launch-bound loop: N launches of an empty kernel (first argument, default 100000), timed on
// the host, to measure what GPU collection adds to each launch (run it with collection off,
// trace and stacks, on the same machine).
#include <chrono>
#include <cstdlib>

#include "check.h"

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 100000;
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1>>>();  // @launch:warmup
  CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1>>>();  // @launch:empty
  CHECK(cudaDeviceSynchronize());
  const auto t1 = std::chrono::steady_clock::now();
  CHECK(cudaGetLastError());
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  std::printf("launch_loop: %d launches (+1000 warm-up) in %.3f ms: %.1f ns per launch\n", launches, ns / 1e6,
              ns / launches);
  return 0;
}
