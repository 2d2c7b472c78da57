// Writes a Strata GPU store as live collection would, for the end-to-end tests: a device, CUDA
// runtime calls, the kernels they launched (a mangled name among them) with launch sites whose
// Python frames name lines of a given file and whose native frames are a libcudart call (a
// module not on this machine) and a line of a native program with debug information, copies
// and a sync. Times start at 10^12 ns, so a JavaScript client reads them exactly. With `metrics`
// last, a profile request's rows too: the last gemm launch measured, the one before it refused.
//   make_gpu_store OUT.strata PYFILE LAUNCH_LINE STEP_LINE LOOP_LINE PROGRAM SOURCE LINE [metrics]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "strata/cuda/store.hpp"
#include "strata/native/symbols/object_symbols.hpp"

using namespace strata::cuda;

namespace {

constexpr std::uint64_t kBase = 1'000'000'000'000ull;
constexpr std::uint32_t kPid = 4242, kTid = 4243;

int fail(const std::string& what) {
  std::fprintf(stderr, "make_gpu_store: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9 && !(argc == 10 && std::string(argv[9]) == "metrics"))
    return fail("usage: make_gpu_store OUT.strata PYFILE LAUNCH_LINE STEP_LINE LOOP_LINE PROGRAM SOURCE LINE [metrics]");
  // The native frame's address in the program: the first code of SOURCE:LINE, as a return
  // address into that line would be.
  auto program = strata::native::symbols::ObjectSymbols::open(argv[6]);
  if (!program) return fail(program.error().message);
  auto at = (*program)->addressesForLine(argv[7], std::atoi(argv[8]));
  if (!at || at->addresses.empty()) return fail(std::string("no code at ") + argv[7] + ":" + argv[8]);
  auto store = Store::create(argv[1]);
  if (!store) return fail(store.error().message);
  Store& s = **store;
  std::string py = argv[2];

  DeviceProperties dev;
  dev.device = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.computeMajor = 9;
  dev.smCount = 132;
  dev.maxThreadsPerBlock = 1024;
  dev.maxThreadsPerMultiprocessor = 2048;
  dev.maxBlocksPerMultiprocessor = 32;
  dev.regsPerBlock = 65536;
  dev.regsPerMultiprocessor = 65536;
  dev.warpSize = 32;
  dev.sharedMemPerBlock = 49152;
  dev.sharedMemPerMultiprocessor = 233472;
  dev.sharedMemPerBlockOptin = 232448;
  dev.reservedSharedMemPerBlock = 1024;
  dev.totalGlobalMem = 85045379072ull;
  dev.source = "collector";
  if (auto r = s.setDeviceProperties(dev); !r) return fail(r.error().message);

  LaunchSite site;
  site.id = 1;
  site.pid = kPid;
  site.python = {{"launch_gemm", py, std::atoi(argv[3])}, {"train_step", py, std::atoi(argv[4])},
                 {"main", py, std::atoi(argv[5])}};
  site.native = {0x7f00'0000'1234ull, 0x5555'5555'6789ull};
  site.nativeFrames = {{0x7f00'0000'1234ull, 0x4'1234ull, "/opt/cuda/lib64/libcudart.so.13", "cudaLaunchKernel"},
                       {0x5555'5555'6789ull, at->addresses.front() + 1, argv[6], "combine"}};
  site.api = "cudaLaunchKernel";
  if (auto r = s.addLaunchSite(site); !r) return fail(r.error().message);

  std::uint32_t gemm = s.internName("_Z4gemmPfS_S_i");
  std::uint32_t relu = s.internName("relu_kernel");
  std::uint32_t launch = s.internName("cudaLaunchKernel");
  std::uint32_t memcpy = s.internName("cudaMemcpyAsync");
  std::vector<GpuRecord> records;
  // Three steps: a launch call, its gemm (the site above) on stream 7, two relus on stream 8.
  std::uint32_t correlation = 0;
  for (int step = 0; step < 3; ++step) {
    std::uint64_t t = kBase + step * 1'000'000ull;
    GpuRecord api;
    api.kind = RecordKind::RuntimeApi;
    api.pid = kPid;
    api.tid = kTid;
    api.name = launch;
    api.correlation = ++correlation;
    api.start = t;
    api.end = t + 5'000;
    records.push_back(api);
    GpuRecord k;
    k.kind = RecordKind::Kernel;
    k.pid = kPid;
    k.stream = 7;
    k.context = 1;
    k.name = gemm;
    k.correlation = correlation;
    k.site = 1;
    k.start = t + 10'000;
    k.end = k.start + 100'000 + step * 50'000;  // the last step's is the slowest
    k.grid[0] = 64, k.grid[1] = 1, k.grid[2] = 1;
    k.block[0] = 256, k.block[1] = 1, k.block[2] = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 4096;
    records.push_back(k);
    for (int r = 0; r < 2; ++r) {
      GpuRecord x = k;
      x.name = relu;
      x.site = 0;
      x.stream = 8;
      x.correlation = 0;
      x.start = t + 300'000 + r * 20'000;
      x.end = x.start + 10'000;
      x.staticSharedMemory = 0;
      records.push_back(x);
    }
  }
  GpuRecord copyCall;
  copyCall.kind = RecordKind::RuntimeApi;
  copyCall.pid = kPid;
  copyCall.tid = kTid;
  copyCall.name = memcpy;
  copyCall.correlation = ++correlation;
  copyCall.start = kBase + 3'000'000;
  copyCall.end = copyCall.start + 2'000;
  records.push_back(copyCall);
  GpuRecord copy;
  copy.kind = RecordKind::Memcpy;
  copy.pid = kPid;
  copy.stream = 7;
  copy.copyKind = 1;  // HtoD
  copy.bytes = 1 << 20;
  copy.correlation = correlation;
  copy.start = kBase + 3'001'000;
  copy.end = copy.start + 40'000;
  records.push_back(copy);
  GpuRecord sync;
  sync.kind = RecordKind::Synchronization;
  sync.pid = kPid;
  sync.stream = 7;
  sync.copyKind = 3;  // stream
  sync.start = kBase + 3'050'000;
  sync.end = sync.start + 5'000;
  records.push_back(sync);
  if (auto r = s.ingest(records); !r) return fail(r.error().message);
  if (auto r = s.addDropped(kPid, 2); !r) return fail(r.error().message);
  if (argc == 10) {
    KernelMetrics measured;
    measured.pid = kPid;
    measured.correlation = 3;  // the third gemm, the slowest
    measured.kernel = "_Z4gemmPfS_S_i";
    measured.request = 2;
    measured.timeNs = kBase + 2'000'000ull;
    measured.passes = 8;
    measured.smThroughputPct = 71.25;
    measured.dramThroughputPct = 18.5;
    measured.achievedOccupancyPct = 46.75;
    measured.durationNs = 201'024;
    KernelMetrics refused = measured;
    refused.correlation = 2;
    refused.smThroughputPct = refused.dramThroughputPct = refused.achievedOccupancyPct = refused.durationNs = std::nullopt;
    refused.passes = 0;
    refused.result = 35;
    refused.error = "no hardware metrics in process 4242: reading the GPU's performance counters is restricted to "
                    "administrators on this machine; tracing goes on";
    if (auto r = s.addKernelMetrics(refused); !r) return fail(r.error().message);
    if (auto r = s.addKernelMetrics(measured); !r) return fail(r.error().message);
  }
  if (auto r = s.close(); !r) return fail(r.error().message);
  return 0;
}
