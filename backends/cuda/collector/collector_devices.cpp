// Device properties inside the collector: the CUDA driver's attributes of each device kernels
// ran on, written to the ring once, so live sessions have occupancy estimates.
#include <dlfcn.h>

#include "collector.hpp"

namespace strata::cuda::collector {

namespace {

// The driver's device attributes, looked up in the libcuda the process loaded.
struct DriverApi {
  using GetAttribute = int (*)(int*, int, int);
  using GetName = int (*)(char*, int, int);
  using TotalMem = int (*)(std::size_t*, int);
  GetAttribute getAttribute = nullptr;
  GetName getName = nullptr;
  TotalMem totalMem = nullptr;
  bool ok = false;
  DriverApi() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    getAttribute = reinterpret_cast<GetAttribute>(dlsym(h, "cuDeviceGetAttribute"));
    getName = reinterpret_cast<GetName>(dlsym(h, "cuDeviceGetName"));
    totalMem = reinterpret_cast<TotalMem>(dlsym(h, "cuDeviceTotalMem_v2"));
    ok = getAttribute && getName;
  }
};

}  // namespace

void Collector::describeDevices() {
  std::uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(producer_);
    if (publisher_) seen = publisher_->devicesSeen();
  }
  const std::uint64_t fresh = seen & ~devicesDescribed_;
  if (!fresh) return;
  static DriverApi driver;  // the first kernel record came after cuInit: libcuda is loaded by now
  if (!driver.ok) {
    devicesDescribed_ |= fresh;  // nothing to ask: said once, not retried
    return;
  }
  for (int d = 0; d < 64; ++d) {
    if (!(fresh >> d & 1)) continue;
    devicesDescribed_ |= std::uint64_t{1} << d;
    ring::DeviceMessage m{};
    m.device = static_cast<std::uint32_t>(d);
    auto attribute = [&](int which) {
      int v = 0;
      return driver.getAttribute(&v, which, d) == CUDA_SUCCESS ? v : 0;
    };
    m.computeMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    m.computeMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    m.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    m.maxThreadsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    m.maxThreadsPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    m.maxBlocksPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    m.regsPerBlock = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    m.regsPerMultiprocessor = attribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    m.warpSize = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    m.sharedMemPerBlock = static_cast<std::uint64_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
    m.sharedMemPerMultiprocessor =
        static_cast<std::uint64_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
    m.sharedMemPerBlockOptin = static_cast<std::uint64_t>(attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    m.reservedSharedMemPerBlock = static_cast<std::uint64_t>(attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
    std::size_t total = 0;
    if (driver.totalMem && driver.totalMem(&total, d) == CUDA_SUCCESS) m.totalGlobalMem = total;
    char name[256] = {};
    if (driver.getName(name, sizeof name - 1, d) != CUDA_SUCCESS) name[0] = 0;
    if (!m.smCount) continue;  // the driver did not answer: no properties rather than zeros
    std::lock_guard<std::mutex> lock(producer_);
    if (!publisher_) return;
    publisher_->addDevice(m, name);
    publisher_->flushPending();
  }
}

}  // namespace strata::cuda::collector
