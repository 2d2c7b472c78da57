// CHECK(call): a CUDA runtime call whose failure ends the example with the call, its line and
// the error's name.
#pragma once

#include <cstdio>

#include <cuda_runtime.h>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t check_error_ = (call);                                                            \
    if (check_error_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorName(check_error_), cudaGetErrorString(check_error_));             \
      return 1;                                                                                   \
    }                                                                                             \
  } while (0)
