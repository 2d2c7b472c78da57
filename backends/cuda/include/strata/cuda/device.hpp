// What is known about one GPU: the properties the occupancy estimate needs, filled by the
// collector (cudaGetDeviceProperties) on a GPU or by an importer from a recorded trace.
#pragma once

#include <cstdint>
#include <string>

namespace strata::cuda {

// Zero means "not known": an importer fills what its source recorded and leaves the rest.
struct DeviceProperties {
  std::uint32_t device = 0;  // the CUDA device ordinal records name in GpuRecord::device
  std::string name;          // "NVIDIA H100 80GB HBM3"
  int computeMajor = 0, computeMinor = 0;
  int smCount = 0;
  int maxThreadsPerBlock = 0;
  int maxThreadsPerMultiprocessor = 0;
  int maxBlocksPerMultiprocessor = 0;  // informative: the estimate derives it from the compute capability
  int regsPerBlock = 0;
  int regsPerMultiprocessor = 0;
  int warpSize = 0;
  std::uint64_t sharedMemPerBlock = 0;
  std::uint64_t sharedMemPerMultiprocessor = 0;
  std::uint64_t sharedMemPerBlockOptin = 0;
  std::uint64_t reservedSharedMemPerBlock = 0;
  std::uint64_t totalGlobalMem = 0;
  std::string source;  // where the values came from: "collector", "kineto", "nsys", a store file
};

}  // namespace strata::cuda
