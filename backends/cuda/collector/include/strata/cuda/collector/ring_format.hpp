// The layout of a collector ring file: what libstrata_cupti.so (the producer, in the target)
// and the adapter's reader (the consumer) both rely on. Plain data at fixed offsets; the
// README in backends/cuda/collector describes it in words.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/cuda/record.hpp"

namespace strata::cuda::ring {

inline constexpr char kMagic[8] = {'S', 'T', 'R', 'G', 'P', 'U', 'R', '1'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderSize = 4096;
inline constexpr std::size_t kAlign = 8;
// A message never exceeds this, so a ring of at least 1 MiB always has room for one.
inline constexpr std::size_t kMaxMessage = 64 * 1024;
inline constexpr std::size_t kMinCapacity = 1 << 20;
inline constexpr std::size_t kStatusTextSize = 512;
inline constexpr std::size_t kSessionSize = 64;
inline constexpr std::size_t kProfileKernelSize = 256;
// A profile request measures at most this many launches.
inline constexpr std::uint32_t kMaxProfileLaunches = 64;
// File names: strata-gpu-<pid>.ring, or strata-gpu-<pid>-<n>.ring when an exec'd image of the
// same process already left one.
inline constexpr const char* kFilePrefix = "strata-gpu-";
inline constexpr const char* kFileSuffix = ".ring";

enum class State : std::uint32_t {
  Starting = 1,    // ring made, CUPTI being set up
  Collecting = 2,
  Stopped = 3,     // strata_gpu_stop, or the process is exiting
  StoodAside = 4,  // another CUPTI client holds the process; text names it
  Refused = 5,     // the CUPTI library is not the version the collector was built for
  Failed = 6,      // a CUPTI call failed; text names it and its result
  Off = 7,         // mode off: loaded, collecting nothing
};

enum class Mode : std::uint32_t { Off = 0, Trace = 1, Stacks = 2 };

enum class MessageType : std::uint16_t {
  Padding = 0,     // fills the end of the data area before a wrap; skip it
  Record = 1,      // one GpuRecord (128 bytes)
  String = 2,      // StringMessage + text
  Site = 3,        // SiteMessage + frames
  CudaError = 4,   // CudaErrorMessage
  ObjectName = 5,  // ObjectNameMessage (NVTX names of threads, devices, streams)
  KernelMetrics = 6,  // KernelMetricsMessage (a launch measured by the range profiler, or why not)
  GraphNode = 7,      // GraphNodeMessage (the site that put a node into a CUDA graph)
  Device = 8,         // DeviceMessage (a device's properties, for occupancy)
};

// Every message starts with this; `length` counts the header and is a multiple of 8.
struct MessageHeader {
  std::uint32_t length;
  std::uint16_t type;
  std::uint16_t reserved;
};
static_assert(sizeof(MessageHeader) == 8);

// Ids are the producer's own (per process, from 1); the reader maps them to session ids.
// A string or site is always written before the first record that uses it.
struct StringMessage {
  std::uint32_t id;
  std::uint32_t size;  // bytes of text that follow (no terminator)
};

struct PythonFrameWire {
  std::uint32_t function;  // string id: co_qualname
  std::uint32_t file;      // string id: co_filename
  std::int32_t line;
  std::uint32_t evalCall;  // 1 + the _PyEval_EvalFrameDefault call running it, innermost first (0: unknown)
};
struct NativeFrameWire {
  std::uint64_t pc;          // return address (the innermost frame: the call's own pc)
  std::uint64_t elfAddress;  // pc minus the module's load bias
  std::uint32_t module;      // string id: the module's path (0: unknown)
  std::uint32_t symbol;      // string id: nearest dynamic symbol (0: none)
};
struct SiteMessage {
  std::uint32_t id;
  std::uint32_t cbid;     // the launch API (CUPTI callback id)
  std::uint32_t api;      // string id: the launch API's name
  std::uint16_t domain;   // CUPTI callback domain (1 driver, 2 runtime)
  std::uint16_t pythonCount;
  std::uint16_t nativeCount;
  std::uint8_t attribution;  // strata::cuda::SiteAttribution (0 in rings of collectors before it)
  std::uint8_t waitKind;     // Caller: what the waiting thread waits in (1 backward())
  std::uint32_t callerTid;   // Caller: the waiting thread
  // then pythonCount PythonFrameWire, nativeCount NativeFrameWire (innermost first)
};
static_assert(sizeof(SiteMessage) == 24 && sizeof(PythonFrameWire) == 16 && sizeof(NativeFrameWire) == 24);

struct CudaErrorMessage {
  std::int32_t result;            // the API's return value (cudaError_t or CUresult)
  std::uint32_t domain;           // CUPTI callback domain of the API
  std::uint32_t cbid;
  std::uint32_t tid;              // the thread that made the call
  std::uint32_t api;              // string id: the API's name
  std::uint32_t error;            // string id: the error's name
  std::uint32_t lastKernel;       // string id: the last kernel this thread launched (0: none)
  std::uint32_t lastCorrelation;  // that launch's correlation id
  std::uint32_t lastSite;         // that launch's site (0: unknown)
  std::uint32_t callerModule;     // string id: the module holding callerPc
  std::uint64_t time;             // CLOCK_REALTIME ns at the API's exit
  std::uint64_t callerPc;         // first return address outside CUDA and the collector
  std::uint64_t callerElfAddress; // callerPc minus its module's load bias
};
static_assert(sizeof(CudaErrorMessage) == 64);
// After a CudaErrorMessage, optionally: a u32 count, a u32 0, then `count` of these: the first
// return addresses outside CUDA's modules and the collector, innermost first. A CUDA runtime
// linked into the program is in the program's module, so callerPc may be its own function; the
// reader picks the first frame with a line of the program's source.
struct CallerWire {
  std::uint64_t pc;
  std::uint64_t elfAddress;
  std::uint32_t module;  // string id
  std::uint32_t reserved;
};
static_assert(sizeof(CallerWire) == 24);

struct ObjectNameMessage {
  std::uint32_t objectKind;  // CUPTI_ACTIVITY_OBJECT_*: 1 process, 2 thread, 3 device, 4 context, 5 stream
  std::uint32_t ids[3];      // process/thread, or device/context/stream
  std::uint32_t name;        // string id
  std::uint32_t reserved;
};

// A node put into a CUDA graph (by stream capture or by adding it), or cloned from such a node
// when the graph was instantiated: its kernel records carry graphNodeId, their replay's site the
// cudaGraphLaunch call.
enum class GraphNodeOrigin : std::uint32_t { Captured = 1, Added = 2, Cloned = 3 };
struct GraphNodeMessage {
  std::uint64_t node;    // CUPTI's graph node id (CUpti_ActivityKernel10::graphNodeId)
  std::uint32_t site;    // the site of the call that made the node (0: unknown)
  std::uint32_t origin;  // GraphNodeOrigin
};
static_assert(sizeof(GraphNodeMessage) == 16);

// What the occupancy estimate needs of one device (the CUDA driver's attributes).
struct DeviceMessage {
  std::uint32_t device;  // the ordinal records carry in deviceId
  std::uint32_t name;    // string id
  std::int32_t computeMajor, computeMinor, smCount, maxThreadsPerBlock, maxThreadsPerMultiprocessor,
      maxBlocksPerMultiprocessor, regsPerBlock, regsPerMultiprocessor, warpSize, reserved;
  std::uint64_t sharedMemPerBlock, sharedMemPerMultiprocessor, sharedMemPerBlockOptin, reservedSharedMemPerBlock,
      totalGlobalMem;
};
static_assert(sizeof(DeviceMessage) == 88);

// Hardware metrics of one launch, measured with CUPTI's range profiler at a profile request,
// or (error != 0) why a request measured nothing. Values are NaN when not measured.
struct KernelMetricsMessage {
  std::uint32_t correlation;  // the launch's correlation id (0: a failure before any launch)
  std::uint32_t kernel;       // string id: the kernel's name as launched (0: none)
  std::uint32_t error;        // string id: the sentence saying why nothing was measured (0: measured)
  std::int32_t result;        // CUptiResult of the call that failed (0: measured)
  std::uint32_t request;      // the request's sequence number (profileSeq, or 0 for STRATA_GPU_PROFILE)
  std::uint32_t remaining;    // launches the request still measures after this one
  std::uint32_t device;
  std::uint32_t passes;       // replay passes the metrics took
  std::uint64_t time;         // CLOCK_REALTIME ns when measured
  double smThroughputPct;     // sm__throughput.avg.pct_of_peak_sustained_elapsed
  double dramThroughputPct;   // dram__throughput.avg.pct_of_peak_sustained_elapsed
  double achievedOccupancyPct;  // sm__warps_active.avg.pct_of_peak_sustained_active
  double durationNs;          // gpu__time_duration.sum
};
static_assert(sizeof(KernelMetricsMessage) == 72);

// The first kHeaderSize bytes of the file. Fields that change after creation are accessed
// through std::atomic_ref on both sides; the producer and consumer positions sit on their own
// cache lines.
struct Header {
  char magic[8];            // written last at creation: a reader that sees it sees the rest
  std::uint32_t formatVersion;
  std::uint32_t headerSize;
  std::uint64_t capacity;   // bytes of the data area that follows the header; power of two
  std::uint32_t pid;
  std::uint32_t recordSize;  // sizeof(GpuRecord)
  std::uint64_t createdRealtimeNs;   // one paired sample of both clocks, for conversions
  std::uint64_t createdMonotonicNs;
  char session[kSessionSize];        // STRATA_GPU_SESSION of the collector, NUL-padded
  char pad0[256 - 112];

  // Producer side.
  std::uint64_t writePos;        // bytes ever written (release after the payload)
  std::uint64_t recordsWritten;
  std::uint64_t droppedRecords;  // records that found the ring full: exact
  std::uint64_t droppedMessages; // names/errors that could not be kept pending: exact
  char pad1[64 - 32];

  // Consumer side.
  std::uint64_t readPos;  // bytes ever consumed (release after reading)
  char pad2[64 - 8];

  // Flush handshake: the reader bumps flushRequest (and futex-wakes it); the collector's
  // flush thread flushes CUPTI, then stores the request it served in flushDone.
  std::uint32_t flushRequest;
  std::uint32_t flushDone;
  char pad3[64 - 8];

  // Status, under a sequence lock: statusSeq is odd while the producer writes it.
  std::uint32_t statusSeq;
  std::uint32_t state;               // State
  std::uint32_t mode;                // Mode
  std::uint32_t cuptiVersion;        // cuptiGetVersion() at start (0: not asked)
  std::uint32_t builtCuptiVersion;   // CUPTI_API_VERSION of the headers it was built with
  std::uint32_t cudaErrors;          // sticky CUDA errors seen (the first is also a message)
  std::uint64_t cuptiDropped;        // records CUPTI itself dropped (cuptiActivityGetNumDroppedRecords)
  std::uint64_t unjoinedLaunches;    // kernels whose launch site was overwritten before they arrived
  std::uint64_t heartbeatNs;         // CLOCK_MONOTONIC of the flush thread's last round
  std::uint64_t sitesOverflowed;     // launches past the site table's capacity (site 0)
  char statusText[kStatusTextSize];  // NUL-terminated
  char pad4[1024 - 1016];

  // Profile request (reader -> collector), under a sequence lock the reader holds: profileSeq
  // is odd while the reader writes the request; each even value is one request. The
  // collector's flush thread takes a request it has not taken yet (profileTaken) and measures
  // the next profileCount launches of kernels whose names contain profileKernel.
  std::uint32_t profileSeq;
  std::uint32_t profileCount;       // 1..kMaxProfileLaunches
  std::uint32_t profileTaken;       // written by the collector: the profileSeq it took last
  std::uint32_t profileReserved;
  char profileKernel[kProfileKernelSize];  // NUL-terminated
};
static_assert(offsetof(Header, writePos) == 256);
static_assert(offsetof(Header, readPos) == 320);
static_assert(offsetof(Header, flushRequest) == 384);
static_assert(offsetof(Header, statusSeq) == 448);
static_assert(offsetof(Header, profileSeq) == 1024);
static_assert(sizeof(Header) <= kHeaderSize);
static_assert(sizeof(GpuRecord) == 128);

inline constexpr std::size_t alignUp(std::size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

inline const char* stateName(State s) {
  switch (s) {
    case State::Starting: return "starting";
    case State::Collecting: return "collecting";
    case State::Stopped: return "stopped";
    case State::StoodAside: return "stood-aside";
    case State::Refused: return "refused";
    case State::Failed: return "failed";
    case State::Off: return "off";
  }
  return "unknown";
}
inline const char* modeName(Mode m) {
  switch (m) {
    case Mode::Off: return "off";
    case Mode::Trace: return "trace";
    case Mode::Stacks: return "stacks";
  }
  return "unknown";
}

}  // namespace strata::cuda::ring
