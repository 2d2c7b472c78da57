// Estimated occupancy through CUDA's header-only calculator (cuda_occupancy.h), which needs
// no GPU and no driver; without the toolkit the estimate says it is unavailable.
#include "strata/cuda/occupancy.hpp"

#include <climits>

#if STRATA_HAVE_CUDA_OCCUPANCY
#include <cuda_occupancy.h>
#endif

namespace strata::cuda {

bool occupancyAvailable() { return STRATA_HAVE_CUDA_OCCUPANCY != 0; }

Result<Occupancy> estimateOccupancy(const DeviceProperties& d, const LaunchShape& launch) {
#if !STRATA_HAVE_CUDA_OCCUPANCY
  (void)d;
  (void)launch;
  return Error{errors::kNoOccupancy, "no occupancy estimate: Strata was built without the CUDA toolkit's cuda_occupancy.h", true};
#else
  std::string missing;
  auto need = [&](bool ok, const char* field) {
    if (!ok) missing += (missing.empty() ? "" : ", ") + std::string(field);
  };
  need(d.computeMajor > 0, "computeMajor");
  need(d.maxThreadsPerBlock > 0, "maxThreadsPerBlock");
  need(d.maxThreadsPerMultiprocessor > 0, "maxThreadsPerMultiprocessor");
  need(d.regsPerBlock > 0, "regsPerBlock");
  need(d.regsPerMultiprocessor > 0, "regsPerMultiprocessor");
  need(d.warpSize > 0, "warpSize");
  need(d.sharedMemPerBlock > 0, "sharedMemPerBlock");
  need(d.sharedMemPerMultiprocessor > 0, "sharedMemPerMultiprocessor");
  if (!missing.empty()) {
    return Error{errors::kNoOccupancy, "no occupancy estimate: device " + std::to_string(d.device) + "'s properties lack " + missing, true};
  }
  if (launch.blockThreads <= 0) return Error{errors::kNoOccupancy, "no occupancy estimate: the launch has no block size", true};

  cudaOccDeviceProp prop;
  prop.computeMajor = d.computeMajor;
  prop.computeMinor = d.computeMinor;
  prop.maxThreadsPerBlock = d.maxThreadsPerBlock;
  prop.maxThreadsPerMultiprocessor = d.maxThreadsPerMultiprocessor;
  prop.regsPerBlock = d.regsPerBlock;
  prop.regsPerMultiprocessor = d.regsPerMultiprocessor;
  prop.warpSize = d.warpSize;
  prop.sharedMemPerBlock = d.sharedMemPerBlock;
  prop.sharedMemPerMultiprocessor = d.sharedMemPerMultiprocessor;
  prop.numSms = d.smCount;
  prop.sharedMemPerBlockOptin = d.sharedMemPerBlockOptin ? d.sharedMemPerBlockOptin : d.sharedMemPerBlock;
  prop.reservedSharedMemPerBlock = d.reservedSharedMemPerBlock;

  // The kernel ran with this shape, so it accepted it: let it use the opt-in shared memory.
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = INT_MAX;
  attr.numRegs = launch.registersPerThread;
  attr.sharedSizeBytes = launch.staticSharedMemory;
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = prop.sharedMemPerBlockOptin;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult res{};
  cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, launch.blockThreads,
                                                             launch.dynamicSharedMemory);
  if (err == CUDA_OCC_ERROR_UNKNOWN_DEVICE) {
    return Error{errors::kNoOccupancy, "no occupancy estimate: compute capability " + std::to_string(d.computeMajor) + "." +
                           std::to_string(d.computeMinor) + " is unknown to this CUDA's occupancy calculator", true};
  }
  if (err != CUDA_OCC_SUCCESS) {
    return Error{errors::kNoOccupancy, "no occupancy estimate: the calculator refused the launch (block " +
                           std::to_string(launch.blockThreads) + " threads, " + std::to_string(launch.registersPerThread) +
                           " registers/thread, " + std::to_string(launch.staticSharedMemory + launch.dynamicSharedMemory) +
                           " B shared memory)", true};
  }
  Occupancy o;
  int warpsPerBlock = (launch.blockThreads + d.warpSize - 1) / d.warpSize;
  o.activeBlocksPerSm = res.activeBlocksPerMultiprocessor;
  o.activeWarpsPerSm = res.activeBlocksPerMultiprocessor * warpsPerBlock;
  o.maxWarpsPerSm = d.maxThreadsPerMultiprocessor / d.warpSize;
  o.occupancy = o.maxWarpsPerSm ? static_cast<double>(o.activeWarpsPerSm) / o.maxWarpsPerSm : 0;
  o.blockLimitWarps = res.blockLimitWarps;
  o.blockLimitRegisters = res.blockLimitRegs;
  o.blockLimitSharedMemory = res.blockLimitSharedMem;
  o.blockLimitBlocks = res.blockLimitBlocks;
  o.allocatedRegistersPerBlock = res.allocatedRegistersPerBlock;
  o.allocatedSharedMemPerBlock = res.allocatedSharedMemPerBlock;
  if (res.limitingFactors & OCC_LIMIT_WARPS) o.limitedBy.push_back("warps");
  if (res.limitingFactors & OCC_LIMIT_REGISTERS) o.limitedBy.push_back("registers");
  if (res.limitingFactors & OCC_LIMIT_SHARED_MEMORY) o.limitedBy.push_back("shared memory");
  if (res.limitingFactors & OCC_LIMIT_BLOCKS) o.limitedBy.push_back("blocks");
  if (res.limitingFactors & OCC_LIMIT_BARRIERS) o.limitedBy.push_back("barriers");
  return o;
#endif
}

}  // namespace strata::cuda
