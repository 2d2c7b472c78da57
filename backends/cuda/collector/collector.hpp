// The CUPTI side of the collector: subscription, activity buffers, launch and API-exit
// callbacks, the flush thread, start and stop. The library holds one Collector per process
// (entry.cpp); tests make their own and drive its callbacks directly.
#pragma once

#include <cupti.h>

#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "activity_parser.hpp"
#include "config.hpp"
#include "launch_sites.hpp"
#include "metric_profiler.hpp"
#include "publisher.hpp"
#include "ring_writer.hpp"
#include "strata/strata_gpu.h"

namespace strata::cuda::collector {

// The two CUPTI calls whose answers decide whether collection may start. Replaceable because
// without a GPU they cannot give the answers the decision must handle (a foreign subscriber,
// another library version); every other call goes to CUPTI itself.
struct CuptiOps {
  CUptiResult (*getVersion)(uint32_t*) = &cuptiGetVersion;
  CUptiResult (*subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) =
      &cuptiSubscribe_v2;
  CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) = &cuptiUnsubscribe;  // pairs with `subscribe`
  // A graph node's id: CUPTI reads it from the driver's node, which tests cannot make.
  CUptiResult (*graphNodeId)(CUgraphNode, std::uint64_t*) = &cuptiGetGraphNodeId;
};

// cuptiGetResultString, or "CUPTI result N".
std::string resultName(CUptiResult result);

// Activity layouts change between CUPTI versions: the library must be the one built against.
// nullopt when `library` equals `built`, otherwise the refusal, naming both.
std::optional<std::string> versionRefusal(std::uint32_t library, std::uint32_t built);

struct SubscribeDecision {
  enum Outcome { Proceed, StandAside, Fail } outcome = Proceed;
  ring::State state = ring::State::Collecting;
  std::string text;
};
// What a cuptiSubscribe_v2 result means for Strata; `oldSubscriber` is what CUPTI wrote into
// CUpti_SubscriberParams::oldSubscriberName.
SubscribeDecision decideSubscribe(CUptiResult result, const char* oldSubscriber, std::uint32_t pid);

// Whether a callback id is one of the kernel and graph launch entry points, or a graph launch.
bool isLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
bool isGraphLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// What a launch launches, from the call's parameters: the kernel's host function (runtime), its
// CUfunction (driver), the executable graph; else a hash of the kernel's name (CUDA 13's
// ___cudaLaunchKernel, whose parameters its headers do not describe). A launch key made of it
// and the Python line needs no unwinding.
std::uint64_t launchedObject(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);

// Per launching thread: what a sticky error reports as "last kernel", and the nesting of a
// runtime call over the driver calls it makes (so one error is reported once, by the call
// the program made).
struct ThreadState {
  int runtimeDepth = 0;
  bool inLaunch = false;  // between a launch's entry and exit (stream capture makes graph nodes there)
  int pendingResult = 0;
  bool pending = false;
  std::uint32_t lastCorrelation = 0;
  std::uint32_t lastSite = 0;
  char lastKernel[256] = {};
};
// The calling thread's.
ThreadState& threadState();

// CLOCK_REALTIME in ns: the clock CUPTI's records use on Linux.
inline std::uint64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

class Collector {
 public:
  explicit Collector(CuptiOps ops = {});
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  // Makes the ring (first time), then sets CUPTI up. Whatever happens is also in the ring's
  // status; the error says it too.
  Result<void> start(const Config& config);
  Result<void> stop();
  Result<void> flush();
  std::string statusLine() const;
  void setErrorHook(StrataGpuErrorHook hook, void* user);
  bool pushExternalId(std::uint64_t id);
  bool popExternalId();
  // Measure the next `count` launches of kernels whose names contain `kernel` (STRATA_GPU_PROFILE
  // at start, request 0; or a reader's request through the ring, which the flush thread takes).
  // Replaces a request still under way. Each launch's metrics, or why there are none, go into
  // the ring as a KernelMetrics message.
  void requestProfile(const std::string& kernel, unsigned count, std::uint32_t request);
  // A Python thread about to wait in a C call for work other threads launch (backward()): its
  // frames, `skip` innermost left out, tie those threads' launches to it until leave. The slot,
  // or -1 (no Python frames, not collecting stacks).
  int scopeEnter(int kind, int skip);
  void scopeLeave(int slot);
  // The Python side of that (the wrapper around torch's autograd engine) is in place.
  void pythonHooked(bool installed);
  bool pythonHooked() const { return pythonHooked_.load(std::memory_order_relaxed); }
  // New launch sites named and written to the ring (their names are read off the launch path).
  void drainSites();
  bool profilePending() const { return profilePending_.load(std::memory_order_relaxed); }

  // CUPTI's callbacks (public so tests can drive them with records and callback data they make).
  void onCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  void onBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxRecords);
  void onBufferCompleted(CUcontext context, std::uint32_t streamId, std::uint8_t* buffer, std::size_t size,
                         std::size_t validSize);
  // The process is exiting (atexit): last flush, status Stopped.
  void onExit();
  // In a forked child: stop touching CUPTI and the parent's ring.
  void onForkChild();

  // For tests and the entry points.
  ring::RingWriter& ring() { return ring_; }
  ring::Mode mode() const { return mode_.load(std::memory_order_relaxed); }
  // Collecting now (started and not stopped or failed).
  bool running() const { return running_.load(std::memory_order_relaxed); }
  const Config& config() const { return config_; }
  SiteTable& sites() { return sites_; }
  PythonFrames& python() { return python_; }
  Scopes& scopes() { return scopes_; }
  // The graph node ids CUPTI would read from the driver's nodes, for tests that make the graph
  // callbacks themselves (before start; no GPU makes a graph node here).
  void setGraphNodeIds(CUptiResult (*graphNodeId)(CUgraphNode, std::uint64_t*)) { ops_.graphNodeId = graphNodeId; }
  // Everything start() does except talking to CUPTI: ring, names, publisher, then running as
  // if subscribed, so callbacks and buffers take the same paths. For tests, which have no GPU.
  Result<void> runWithoutCupti(const Config& config);

 private:
  Result<void> prepare(const Config& config);
  void setStatus(ring::State state, const std::string& text);
  Result<void> fail(ring::State state, const std::string& text);
  Result<void> enableActivities(std::string& notes);
  void disableActivities();
  void enableCallbacks(bool on);
  void onLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void onApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void onResource(CUpti_CallbackId cbid, const void* data);
  void enableErrorCallbacks(std::uint32_t flag);
  // Asks the main thread (a pending call) to put the autograd engine wrapper in place, at most
  // once a second and 20 times in all, until it says it is.
  void maybeHookPython();
  // Properties of the devices kernels ran on that the ring has not described yet (the driver's
  // attributes; from the flush thread, never from a CUPTI callback).
  void describeDevices();
  void reportCudaError(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int result, const char* errorName,
                       const CUpti_CallbackData* cb);
  void maybeProfile(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void finishProfile(std::uint32_t correlation);
  // At every API exit: ends the range when it is the exit of the launch this thread measures.
  void profiledExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void endProfileRequest();
  void takeProfileRequest();  // the reader's request in the ring header, if one waits
  void publishMetrics(const KernelMetricsInfo& info);
  void enableLaunchCallbacks(bool on);
  void startFlushThread();
  void stopFlushThread();
  void flushLoop();
  // The first return addresses outside CUDA's modules and the collector: the program's call.
  int programPcs(std::uint64_t* pcs, int max);

  CuptiOps ops_;
  Config config_;
  std::atomic<ring::Mode> mode_{ring::Mode::Off};
  std::atomic<bool> running_{false};
  std::atomic<bool> forked_{false};
  std::atomic<bool> errorsOn_{false};
  std::atomic<bool> finalizePending_{false};
  std::atomic<bool> errorReported_{false};
  std::uint32_t pid_ = 0;

  mutable std::mutex producer_;  // ring writes, publisher, status text; never held across CUPTI
  ring::RingWriter ring_;
  std::string statusText_;
  std::unique_ptr<Publisher> publisher_;
  ApiNames names_;
  bool namesLoaded_ = false;
  PythonFrames python_;
  NativeStack native_;
  Scopes scopes_;
  SiteTable sites_;
  LaunchJoin join_;
  std::mutex drain_;  // drainSites; taken before producer_, never under it

  std::atomic<bool> pythonHooked_{false};
  std::atomic<int> hookAttempts_{0};
  std::atomic<std::int64_t> lastHookNs_{0};

  std::mutex graphMutex_;  // graphNodes_
  std::unordered_map<std::uint64_t, std::uint32_t> graphNodes_;  // graph node id -> the site that made it

  std::uint64_t devicesDescribed_ = 0;  // flush thread only

  std::mutex control_;  // start/stop/flush against each other
  // Cleared by the callback that finalizes CUPTI, on whichever thread that is.
  std::atomic<CUpti_SubscriberHandle> subscriber_{nullptr};
  std::vector<CUpti_ActivityKind> enabled_;

  std::mutex buffersMutex_;
  std::vector<std::uint8_t*> freeBuffers_;
  std::atomic<std::size_t> outstanding_{0};

  std::thread flushThread_;
  std::atomic<bool> flushStop_{false};
  bool cuptiFlushPeriod_ = false;

  // Profile requests. The launch callback reads profilePending_ alone (one relaxed load) unless
  // a request has launches left; profileBusy_ lets one launch at a time into the profiler.
  std::atomic<bool> profilePending_{false};
  std::atomic<bool> profileBusy_{false};
  std::mutex profileTake_;   // taking a request out of the ring header
  std::mutex profileMutex_;  // the request's fields; never held across a CUPTI call
  std::string profileKernel_;
  unsigned profileLeft_ = 0;
  std::uint32_t profileRequest_ = 0;
  RangeProfiler profiler_;       // used only by the thread holding profileBusy_
  std::string profiledName_;     // the launch being measured (profileBusy_ holder)
  std::uint32_t profiledDevice_ = 0;
  std::uint32_t profiledRequest_ = 0;
  std::atomic<bool> profileCallbacks_{false};  // launch callbacks on for a request only

  std::atomic<StrataGpuErrorHook> hook_{nullptr};
  std::atomic<void*> hookUser_{nullptr};
};

// The one Collector of the library's process (entry.cpp), behind the exported entry points.
Collector& processCollector();

// The collector CUPTI calls back through (the buffer callbacks carry no user data).
Collector* activeCollector();
void setActiveCollector(Collector* collector);

}  // namespace strata::cuda::collector
