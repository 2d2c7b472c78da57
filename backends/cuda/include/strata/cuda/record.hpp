// The normalized GPU record: what the CUPTI collector produces (in the target), what the
// importers (Kineto JSON, Nsight Systems SQLite) produce from a file, and what the store
// ingests and queries. Plain data, fixed size, no pointers: it crosses a shared-memory ring.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::cuda {

enum class RecordKind : std::uint8_t {
  Kernel = 1,       // a kernel execution (CUPTI CONCURRENT_KERNEL)
  Memcpy = 2,       // a copy (copyKind says which way)
  Memset = 3,
  Synchronization = 4,  // cudaDeviceSynchronize, stream/event sync (syncKind)
  RuntimeApi = 5,   // a CUDA runtime call on a CPU thread
  DriverApi = 6,    // a CUDA driver call on a CPU thread
  Marker = 7,       // an NVTX range (start..end) or instant mark (start == end)
  GraphLaunch = 8,  // one launch of a CUDA graph, as one record
  Overhead = 9,     // CUPTI's own overhead (buffer flush, instrumentation)
  CpuOp = 10,       // a framework CPU operation (torch op from a Kineto trace)
};

// As the store, its views and the collector's dump name a kind: "kernel", "memcpy", "cpu_op", ...
constexpr std::string_view recordKindName(RecordKind kind) {
  switch (kind) {
    case RecordKind::Kernel: return "kernel";
    case RecordKind::Memcpy: return "memcpy";
    case RecordKind::Memset: return "memset";
    case RecordKind::Synchronization: return "sync";
    case RecordKind::RuntimeApi: return "runtime";
    case RecordKind::DriverApi: return "driver";
    case RecordKind::Marker: return "marker";
    case RecordKind::GraphLaunch: return "graph";
    case RecordKind::Overhead: return "overhead";
    case RecordKind::CpuOp: return "cpu_op";
  }
  return "unknown";
}

// Which way a copy went (CUPTI_ACTIVITY_MEMCPY_KIND_* numbering).
enum class CopyKind : std::uint8_t {
  Unknown = 0, HtoD = 1, DtoH = 2, HtoA = 3, AtoH = 4, AtoA = 5, AtoD = 6, DtoA = 7, DtoD = 8,
  HtoH = 9, PtoP = 10,
};

// One GPU or CPU-side event. Times are integer nanoseconds on CLOCK_REALTIME (the clock
// CUPTI uses on Linux by default), either may be 0 when the source did not know it.
// Strings are interned: `name` is an id in the session's string table (0: none).
struct GpuRecord {
  RecordKind kind = RecordKind::Kernel;
  std::uint8_t copyKind = 0;   // Memcpy: CopyKind; Synchronization: CUPTI sync type
  std::uint8_t srcKind = 0, dstKind = 0;  // Memcpy: CUPTI memory kinds
  std::uint32_t pid = 0;       // the process that made or launched it
  std::uint32_t tid = 0;       // API and marker records: the calling thread; 0 for GPU work
  std::uint32_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation = 0;  // joins a kernel/copy with the API call that launched it
  std::uint32_t name = 0;         // interned: kernel name (mangled), API name, marker text
  std::uint32_t site = 0;         // launch site id (0: unknown), see LaunchSite
  std::int32_t result = 0;        // API records: the call's return value
  std::uint64_t start = 0, end = 0;
  std::uint64_t externalId = 0;   // external correlation (framework op id), 0: none
  std::uint64_t bytes = 0;        // Memcpy/Memset size
  std::uint64_t graphId = 0, graphNodeId = 0;
  std::int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::uint32_t registersPerThread = 0;
  std::uint32_t staticSharedMemory = 0, dynamicSharedMemory = 0;
  std::uint32_t reserved = 0;  // CpuOp: autograd's sequence number + 1 (0: none), which a backward op shares with its forward op
};
static_assert(sizeof(GpuRecord) == 128, "GpuRecord is a fixed-size wire format");

// Where a launch came from: the calling thread's Python frames (innermost first) and native
// return addresses, shared by every launch with the same key.
struct PythonFrame {
  std::string function;  // co_qualname
  std::string file;      // co_filename
  int line = 0;
  // 1 + which _PyEval_EvalFrameDefault call (innermost first) runs the frame, so the frames can
  // stand in for that call's native frame; 0 when unknown (a trace, an older collector).
  int evalCall = 0;
};
// A native frame as the collector resolved it in the target (dladdr): the module holding the
// return address, that address in the module's own terms (pc minus load bias: what its DWARF
// and symbol table use; look up elfAddress - 1 for the calling line), the nearest dynamic symbol.
struct NativeFrame {
  std::uint64_t pc = 0;
  std::uint64_t elfAddress = 0;
  std::string module;
  std::string symbol;
  // Resolved from the module's DWARF by the reader's side (empty/0 when unknown): the function
  // (demangled; the symbol when DWARF has none) and the calling line.
  std::string function;
  std::string file;
  int line = 0;
};
// How a site's Python frames relate to its launches.
enum class SiteAttribution : std::uint8_t {
  Unknown = 0,  // not said (a trace, an older collector)
  Own = 1,      // the launching thread's own Python frames
  Caller = 2,   // the launching thread had none (autograd's engine threads): the frames of the
                // Python thread that waited for it, in `callerTid`
  None = 3,     // no Python frames to tie the launch to
};
// As the store, gpuKernel and the collector's dump write it: "own", "caller", "none"; "" unknown.
constexpr std::string_view siteAttributionName(SiteAttribution a) {
  switch (a) {
    case SiteAttribution::Own: return "own";
    case SiteAttribution::Caller: return "caller";
    case SiteAttribution::None: return "none";
    case SiteAttribution::Unknown: break;
  }
  return "";
}
constexpr SiteAttribution siteAttributionFromName(std::string_view name) {
  return name == "own" ? SiteAttribution::Own
         : name == "caller" ? SiteAttribution::Caller
         : name == "none" ? SiteAttribution::None
                          : SiteAttribution::Unknown;
}
// What a Caller site's waiting thread waited in, as the views say it: "backward()", "a call".
inline std::string waitedInText(std::string_view waitedIn) {
  if (waitedIn == "backward") return "backward()";
  return waitedIn.empty() ? "a call" : std::string(waitedIn);
}
struct LaunchSite {
  std::uint32_t id = 0;
  std::uint32_t pid = 0;
  std::vector<PythonFrame> python;
  std::vector<std::uint64_t> native;  // return addresses, innermost first
  std::vector<NativeFrame> nativeFrames;  // the same frames resolved, when the source knew them
  std::string api;                        // the launch call: "cudaLaunchKernel", "cuLaunchKernel"
  SiteAttribution attribution = SiteAttribution::Unknown;
  std::uint32_t callerTid = 0;  // Caller: the waiting thread
  std::string waitedIn;         // Caller: what it waited in ("backward")
};
// A node of a CUDA graph and the site of the call that made it (capture or add); the kernels
// a replay runs carry its id in graphNodeId.
struct GraphNodeSite {
  std::uint32_t pid = 0;
  std::uint64_t node = 0;
  std::uint32_t site = 0;
  std::string origin;  // "captured", "added", "cloned"
};

}  // namespace strata::cuda
