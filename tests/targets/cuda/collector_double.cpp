// The test build of libstrata_cupti.so (tests/targets/cuda/CMakeLists.txt): the collector's own
// sources plus these exports, which make the CUPTI callbacks that kernel launches and a failing
// cudaDeviceSynchronize make, and hand the collector the activity buffers CUPTI would complete
// for those launches, so launches, their sites and a sticky error go through the collector's
// real code (callbacks, real libcupti record parsing, ring) on a machine without a GPU. Only
// the tests load it; the library users get has no such entry.
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <unistd.h>
#include <vector>

#include "collector.hpp"

namespace {

using namespace strata::cuda::collector;

void callback(Collector& c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
              std::uint32_t correlation, const char* symbol, int* result) {
  CUpti_CallbackData cb{};
  cb.callbackSite = site;
  cb.functionName = "?";
  cb.symbolName = symbol;
  cb.correlationId = correlation;
  cb.functionReturnValue = result;
  c.onCallback(domain, cbid, &cb);
}

// Runs the collector as if CUPTI had subscribed it: `config` as for strata_gpu_start, NULL for
// the environment only (STRATA_GPU_* as a launch sets them).
bool ensureRunning(Collector& c, const char* config) {
  static bool running = false;
  if (running) return true;
  auto settings = configFromEnvironment([](const char* name) { return std::getenv(name); });
  if (settings && config) settings = parseConfig(config, *settings);
  if (!settings || !c.runWithoutCupti(*settings)) return false;
  running = true;
  // As InitializeInjection does: the process's exit flushes what is left (and describes its
  // devices) before the ring is read for the last time.
  std::atexit([] { processCollector().onExit(); });
  return true;
}

std::uint64_t nowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

// Activity records as CUPTI writes them into a buffer, then handed over as one completed buffer.
struct Records {
  std::vector<std::uint8_t> bytes;
  template <class R>
  void add(const R& record) {
    const std::size_t at = bytes.size();
    bytes.resize(at + sizeof record);
    std::memcpy(bytes.data() + at, &record, sizeof record);
  }
  bool deliver(Collector& c) const {
    std::uint8_t* buffer = nullptr;
    std::size_t size = 0, maxRecords = 0;
    c.onBufferRequested(&buffer, &size, &maxRecords);
    if (!buffer || size < bytes.size()) return false;
    std::memcpy(buffer, bytes.data(), bytes.size());
    c.onBufferCompleted(nullptr, 0, buffer, size, bytes.size());
    return true;
  }
};

}  // namespace

// `count` launches of `kernel` (a mangled name) from the calling thread, each 1 µs of GPU time
// on stream 7 of device 0 with grid (count,1,1) and block (128,1,1), and their records delivered
// as one completed buffer. Returns the number of launches made, -1 when the collector could not
// run.
extern "C" __attribute__((visibility("default"))) int strata_gpu_test_launches(const char* config, const char* kernel,
                                                                             int count) {
  Collector& c = processCollector();
  if (!ensureRunning(c, config)) return -1;
  // Mode off, or a start that failed: CUPTI would call no callback and deliver no record.
  if (!c.running()) return 0;
  static std::uint32_t nextCorrelation = 1000;
  Records records;
  const std::uint64_t base = nowNs();
  for (int i = 0; i < count; ++i) {
    const std::uint32_t corr = nextCorrelation++;
    int ok = 0;
    callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, corr,
             kernel, &ok);
    callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, corr,
             kernel, &ok);
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr;
    k.start = base + 2000u * std::uint64_t(i);
    k.end = k.start + 1000;
    k.deviceId = 0;
    k.streamId = 7;
    k.gridX = count;
    k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 16;
    k.name = kernel;
    records.add(k);
    CUpti_ActivityAPI api{};
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    api.correlationId = corr;
    api.processId = std::uint32_t(getpid());
    api.threadId = std::uint32_t(gettid());
    api.start = k.start - 500;
    api.end = k.start - 100;
    records.add(api);
  }
  return records.deliver(c) ? count : -1;
}

// The same from a thread started here (a C++ thread with no Python frame, as autograd's engine
// threads launch the kernels of backward()), joined before it returns.
extern "C" __attribute__((visibility("default"))) int strata_gpu_test_launches_from_thread(const char* config,
                                                                                         const char* kernel, int count) {
  int made = -1;
  std::thread t([&] { made = strata_gpu_test_launches(config, kernel, count); });
  t.join();
  return made;
}

namespace {

// Graph nodes as the test makes them: a CUgraphNode is the address of its id.
CUptiResult fakeGraphNodeId(CUgraphNode node, std::uint64_t* id) {
  if (!node || !id) return CUPTI_ERROR_INVALID_PARAMETER;
  *id = *reinterpret_cast<const std::uint64_t*>(node);
  return CUPTI_SUCCESS;
}

void graphCallback(Collector& c, CUpti_CallbackId cbid, std::uint64_t* node, std::uint64_t* original) {
  CUpti_GraphData graph{};
  graph.node = reinterpret_cast<CUgraphNode>(node);
  graph.originalNode = reinterpret_cast<CUgraphNode>(original);
  graph.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  CUpti_ResourceData resource{};
  resource.resourceDescriptor = &graph;
  c.onCallback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &resource);
}

}  // namespace

// A CUDA graph as torch.cuda.graph makes one, from the calling thread: `kernel` launched into a
// stream capture (its launch callbacks with the node made inside), the graph instantiated (the
// node cloned), then `replays` launches of the graph (cudaGraphLaunch callbacks), each running
// the kernel with the clone's node id. Returns the replays made, -1 when the collector could not
// run. The capture and the replays come from different calling lines: the ones that call
// strata_gpu_test_graph_capture and strata_gpu_test_graph_replay.
extern "C" __attribute__((visibility("default"))) int strata_gpu_test_graph_capture(const char* config, const char* kernel) {
  Collector& c = processCollector();
  static bool ids = false;
  if (!ids) c.setGraphNodeIds(&fakeGraphNodeId), ids = true;
  if (!ensureRunning(c, config)) return -1;
  if (!c.running()) return 0;
  static std::uint64_t captured = 0x1000, cloned = 0x2000;
  int ok = 0;
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, 900, kernel, &ok);
  graphCallback(c, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &captured, nullptr);
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, 900, kernel, &ok);
  graphCallback(c, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &cloned, &captured);
  return 1;
}

extern "C" __attribute__((visibility("default"))) int strata_gpu_test_graph_replay(const char* config, const char* kernel,
                                                                                 int replays) {
  Collector& c = processCollector();
  if (!ensureRunning(c, config)) return -1;
  if (!c.running()) return 0;
  static std::uint32_t nextCorrelation = 500000;
  Records records;
  const std::uint64_t base = nowNs();
  for (int i = 0; i < replays; ++i) {
    const std::uint32_t corr = nextCorrelation++;
    int ok = 0;
    callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_ENTER, corr, nullptr, &ok);
    callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_API_EXIT, corr, nullptr, &ok);
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr;
    k.start = base + 2000u * std::uint64_t(i);
    k.end = k.start + 1000;
    k.streamId = 9;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 64;
    k.blockY = k.blockZ = 1;
    k.graphId = 1;
    k.graphNodeId = 0x2000;
    k.name = kernel;
    records.add(k);
  }
  return records.deliver(c) ? replays : -1;
}

// `config` as for strata_gpu_start; the collector runs as if CUPTI had subscribed it. Returns
// `result` after the failing call's exit (where the hook and the stop ran), -1/-2 when the
// collector could not run.
extern "C" __attribute__((visibility("default"))) int strata_gpu_test_sticky_error(const char* config,
                                                                                 const char* kernel, int result) {
  Collector& c = processCollector();
  auto settings = configFromEnvironment([](const char* name) { return std::getenv(name); });
  if (settings && config) settings = parseConfig(config, *settings);
  if (!settings) return -2;
  if (!ensureRunning(c, config)) return -1;
  int ok = 0;
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, 7, kernel, &ok);
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, 7, kernel, &ok);
  int failed = result;
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_ENTER, 8,
           nullptr, &failed);
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_EXIT, 8,
           nullptr, &failed);
  return failed;
}
