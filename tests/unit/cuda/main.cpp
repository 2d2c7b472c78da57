// doctest's main for the GPU store tests; `--occupancy` exits 77 (skipped) with the reason
// when Strata was built without CUDA's occupancy calculator.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "strata/cuda/occupancy.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args;
  bool occupancy = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--occupancy") == 0) occupancy = true;
    else args.push_back(argv[i]);
  }
  if (occupancy && !strata::cuda::occupancyAvailable()) {
    std::printf("SKIPPED: Strata was built without the CUDA toolkit's cuda_occupancy.h, so there is no occupancy estimate to test\n");
    return 77;
  }
  doctest::Context context(static_cast<int>(args.size()), args.data());
  return context.run();
}
