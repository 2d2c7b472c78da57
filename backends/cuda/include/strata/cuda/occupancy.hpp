// Estimated occupancy of one kernel launch from its record (block, registers, shared memory)
// and its device's properties, through CUDA's header-only occupancy calculator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/cuda/device.hpp"
#include "strata/result.hpp"

namespace strata::cuda {

struct LaunchShape {
  int blockThreads = 0;  // block.x * block.y * block.z
  int registersPerThread = 0;
  std::uint64_t staticSharedMemory = 0;
  std::uint64_t dynamicSharedMemory = 0;
};

struct Occupancy {
  int activeBlocksPerSm = 0;  // 0: this launch shape cannot run on the device
  int activeWarpsPerSm = 0;
  int maxWarpsPerSm = 0;
  double occupancy = 0;  // activeWarpsPerSm / maxWarpsPerSm, 0..1
  std::vector<std::string> limitedBy;  // "warps", "registers", "shared memory", "blocks", ...
  int blockLimitWarps = 0, blockLimitRegisters = 0, blockLimitSharedMemory = 0,
      blockLimitBlocks = 0;  // blocks per SM each resource allows (INT_MAX: not limiting)
  int allocatedRegistersPerBlock = 0;
  std::uint64_t allocatedSharedMemPerBlock = 0;
};

// False when Strata was built without CUDA's cuda_occupancy.h (no toolkit found).
bool occupancyAvailable();

// An error names what is missing: the calculator, a device property, the launch shape.
Result<Occupancy> estimateOccupancy(const DeviceProperties& device, const LaunchShape& launch);

}  // namespace strata::cuda
