// GPU collection for one session, shared by the adapter and the `strata gpu` CLI: the
// environment that injects the CUPTI collector into a launched program, the collector's rings
// drained into a GPU store on a timer and at every stop, and what the session must tell the
// user (new activity, sticky CUDA errors, the collectors' status sentences).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>

#include "strata/cuda/collector/reader.hpp"
#include "strata/cuda/record.hpp"
#include "strata/cuda/store.hpp"
#include "strata/result.hpp"

namespace strata::cuda {

// The collector's modes (STRATA_GPU_MODE): `off` loads it and collects nothing until a late
// start; `trace` records activity; `stacks` adds the launching Python and native frames.
enum class GpuMode { Off, Trace, Stacks };
Result<GpuMode> parseGpuMode(std::string_view text);  // kGpuSetting naming what was expected
std::string_view gpuModeName(GpuMode mode);

// Where the collector and its CUPTI are, and where the search looked.
struct CollectorFiles {
  std::string collector;  // libstrata_cupti.so; "" when not found
  std::string cupti;      // libcupti.so.13 for NVTX_INJECTION64_PATH; "" when not found
  std::vector<std::string> searched;
};
// $STRATA_GPU_COLLECTOR; beside `executable` (a bundle); <prefix>/lib/strata/ for
// <prefix>/bin/EXE (installed); the build tree's (compiled in). libcupti.so.13 beside the
// collector first (a bundle), then the toolkit's the collector was built with.
CollectorFiles locateCollector(const std::string& executable);
// A collector named by path (and its CUPTI, found the same way).
CollectorFiles collectorAt(const std::string& collector);

// Why CUDA cannot start on this machine ("" when an NVIDIA driver looks present): the hint a
// run that left no ring gets.
std::string machineGpuProblem();

struct GpuCollectionOptions {
  GpuMode mode = GpuMode::Trace;
  // Directory of the rings; "" makes a fresh one (0700, on $XDG_RUNTIME_DIR, /dev/shm or
  // /tmp), removed with its rings when the collection ends.
  std::string dir;
  // Written into every ring; the reader skips rings of other sessions. "" makes one.
  std::string session;
  // The running adapter or CLI (locateCollector looks beside it); "" means /proc/self/exe.
  std::string executable;
  // libstrata_cupti.so to use instead of searching.
  std::string collector;
  std::chrono::milliseconds period{100};           // poll timer and STRATA_GPU_FLUSH_MS (10..100)
  std::chrono::milliseconds stopFlush{100};        // flushAtStop: longest wait for the collectors
  std::chrono::milliseconds exitGrace{2000};       // finish: longest wait for rings still written
  std::size_t maxRecordsPerPoll = std::size_t{1} << 20;  // bounds one poll's work on the executor
  bool keepRings = false;                          // leave ring files behind (debugging)
  // STRATA_GPU_PROFILE for a launched program: "NAME[:N]", hardware metrics of the next N
  // launches of kernels whose names contain NAME ("" none; checked by create()).
  std::string profile;
};

// New data, for the DAP `gpuActivity` event (toJson(totals) is its body).
struct GpuActivity {
  ActivityCounts totals;          // the store after this poll: records, kernels, copies, dropped, timeSpan
  std::uint64_t newRecords = 0;   // since the last report
  std::uint64_t newDropped = 0;   // records lost since the last report (ring full, CUPTI's buffers)
};

// A sticky CUDA error (illegal address, assert, launch failure...): the process's CUDA context
// is dead after it. The adapter turns it into a stop with reason "exception".
struct GpuError {
  std::uint32_t pid = 0, tid = 0;
  std::string api;          // "cudaDeviceSynchronize"
  std::string error;        // "cudaErrorIllegalAddress"
  std::int32_t result = 0;  // 700
  std::string lastKernel;   // demangled; "" when the thread launched none
  std::uint32_t lastCorrelation = 0;
  std::uint32_t lastSite = 0;     // store/site id of that launch (0 unknown); frames below
  std::vector<PythonFrame> lastLaunchPython;  // innermost first
  std::vector<NativeFrame> lastLaunchNative;
  NativeFrame caller;       // the program's call that returned the error (function/file/line when its DWARF has them)
  std::uint64_t timeNs = 0; // CLOCK_REALTIME
  std::string message;      // one sentence for exceptionInfo / the console
};

// One thing the user must be told, once.
struct GpuNote {
  enum class Kind {
    Collecting,    // a process started collecting (not a problem)
    Off,           // loaded with mode off (not a problem)
    StoodAside,    // another CUPTI client holds the process
    Refused,       // CUPTI version mismatch
    Failed,        // a CUPTI call failed: no GPU, no driver, ...
    RingProblem,   // a ring that cannot be read (corrupt, not a ring), or the store that cannot be written
    Dropped,       // the first records lost in a process
    NoCollector,   // libstrata_cupti.so not found: nothing can be collected
    NoRing,        // at exit: no process ever loaded the collector
    Profile,       // a launch's measured hardware metrics, or why a profile request measured none (problem)
  };
  Kind kind = Kind::Collecting;
  std::uint32_t pid = 0;  // 0: not about one process
  bool problem = false;   // true: GPU activity is missing because of it
  std::string text;       // a sentence for the user
};

struct GpuCallbacks {
  std::function<void(const GpuActivity&)> activity;
  std::function<void(const GpuError&)> error;
  std::function<void(const GpuNote&)> note;
};

// Late mode: what the target needs to load the collector and start or stop it.
struct LateStart {
  std::string collector;  // path of libstrata_cupti.so
  std::string config;     // strata_gpu_start's text: "mode=stacks dir=... session=... flush_ms=100"
  // Arguments of the Python agent's `strataGpuStart` request ({"collector", "config"}).
  boost::json::object agentArguments() const;
  // The same as Python source (for an agent without the request): loads the collector with
  // ctypes and leaves `strata_gpu_start`'s result in `_strata_gpu_result`.
  std::string pythonStart() const;
  static std::string pythonStop(const std::string& collector);
};

// A profile request written NAME[:N] (N 1..64, default 1; only a last ':' followed by digits is
// the count, so NAME may hold '::'), as `strata gpu run --profile` and STRATA_GPU_PROFILE take it.
Result<void> parseProfile(const std::string& text, std::string& kernel, unsigned& count);

// Not thread-safe: every call, timer and callback runs on the executor given to create()
// (the adapter's main io_context). Callbacks must not destroy the collection.
class GpuCollection {
 public:
  // Writes into `store`, which must outlive the collection. Fails only when the ring
  // directory cannot be made; a missing collector is a NoCollector note at start().
  static Result<std::unique_ptr<GpuCollection>> create(boost::asio::any_io_executor executor, Store& store,
                                                       GpuCollectionOptions options, GpuCallbacks callbacks);
  ~GpuCollection();  // timer cancelled; rings (and a directory it made) removed unless keepRings
  GpuCollection(const GpuCollection&) = delete;
  GpuCollection& operator=(const GpuCollection&) = delete;

  // Launch mode: NAME, VALUE pairs for the program's environment (CUDA_INJECTION64_PATH,
  // NVTX_INJECTION64_PATH, STRATA_GPU_*); empty when the collector was not found.
  std::vector<std::pair<std::string, std::string>> environment() const;
  // Late mode: what the agent needs; fails (kGpuCollectorMissing) when there is no collector.
  // `mode`: what to collect (trace or stacks); absent: the collection's own (off means trace).
  Result<LateStart> lateStart(std::optional<GpuMode> mode = std::nullopt) const;

  // Hardware metrics of the next `count` (1..64) launches of kernels whose names contain
  // `kernel`, in every process of the program: written into every live ring now and into
  // rings that appear later. Each measured launch (or the reason none could be) arrives as a
  // Profile note and a kernel_metrics row, shown by gpuKernel on that launch. Returns how many
  // processes were asked now (0: none is collecting yet; later ones are).
  Result<std::size_t> requestProfile(const std::string& kernel, std::uint32_t count);

  // Starts the poll timer (call once the program runs). Says NoCollector here when needed.
  void start();
  // Drains every ring now into the store and reports what came (what the timer does).
  void poll();
  // At a stop: asks live collectors to flush (a ptrace-stopped process cannot answer and is not
  // asked; none is waited for past `stopFlush`), drains, then calls `done` on the executor.
  void flushAtStop(std::function<void()> done = {});
  // The program has ended: drains until every ring's producer is gone (at most exitGrace),
  // says NoRing when nothing ever loaded the collector, stops the timer, then calls `done`.
  void finish(std::function<void()> done = {});

  GpuMode mode() const;
  const std::string& dir() const;
  const std::string& session() const;
  const CollectorFiles& files() const;
  std::vector<CollectorStatus> processes() const;
  bool sawRing() const;
  Store& store();

  struct Impl;

 private:
  explicit GpuCollection(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace strata::cuda
