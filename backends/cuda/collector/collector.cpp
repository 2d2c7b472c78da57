// CUPTI subscription, activity buffers, callbacks, the flush thread, start and stop (see
// collector.hpp). Rules kept throughout: no exception leaves a CUPTI callback, and no CUPTI
// call is made while producer_ is held (CUPTI's own locks would order against it).
#include "collector.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "sticky_errors.hpp"
#include "strata/cuda/collector/futex.hpp"

namespace strata::cuda::collector {
namespace {

std::atomic<Collector*> g_active{nullptr};
constexpr std::size_t kBuffersKept = 4;

thread_local ThreadState t_state;

// CUDA's libraries that launch for the program: a launch key is made of their callers' frames.
const std::vector<std::string> kCudaLibraries = {"libcublas", "libcudnn", "libcufft",   "libcurand",   "libcusparse",
                                                 "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt"};

void CUPTIAPI callbackTrampoline(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  static_cast<Collector*>(user)->onCallback(domain, cbid, data);
}

void CUPTIAPI requestTrampoline(std::uint8_t** buffer, std::size_t* size, std::size_t* maxRecords) {
  if (Collector* c = g_active.load(std::memory_order_acquire)) {
    c->onBufferRequested(buffer, size, maxRecords);
  } else {
    *buffer = nullptr;
    *size = 0;
    *maxRecords = 0;
  }
}

void CUPTIAPI completeTrampoline(CUcontext ctx, std::uint32_t streamId, std::uint8_t* buffer, std::size_t size,
                                 std::size_t validSize) {
  if (Collector* c = g_active.load(std::memory_order_acquire)) c->onBufferCompleted(ctx, streamId, buffer, size, validSize);
  else std::free(buffer);
}

}  // namespace

ThreadState& threadState() { return t_state; }

Collector* activeCollector() { return g_active.load(std::memory_order_acquire); }
void setActiveCollector(Collector* collector) { g_active.store(collector, std::memory_order_release); }

std::string resultName(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text)
    return std::string(text) + " (" + std::to_string(static_cast<int>(result)) + ")";
  return "CUPTI result " + std::to_string(static_cast<int>(result));
}

std::optional<std::string> versionRefusal(std::uint32_t library, std::uint32_t built) {
  if (library == built) return std::nullopt;
  return "the CUPTI library in this process is version " + std::to_string(library) +
         ", but the Strata collector was built for CUPTI version " + std::to_string(built) +
         ": activity record layouts differ between versions, so nothing is collected (put the libcupti of "
         "the CUDA toolkit Strata was built with first on the library path)";
}

SubscribeDecision decideSubscribe(CUptiResult result, const char* oldSubscriber, std::uint32_t pid) {
  SubscribeDecision d;
  if (result == CUPTI_SUCCESS) return d;
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    const std::string who = oldSubscriber && *oldSubscriber
                                ? std::string(oldSubscriber)
                                : std::string("another CUPTI client (a profiler such as torch.profiler, Nsight Systems "
                                              "or Nsight Compute, or cuda-gdb or compute-sanitizer)");
    d.outcome = SubscribeDecision::StandAside;
    d.state = ring::State::StoodAside;
    d.text = "CUPTI is held by " + who + ": CUDA 13.0 allows one CUPTI client per process, so Strata stands aside "
             "and collects no GPU activity in process " + std::to_string(pid) + " (cuptiSubscribe_v2: " +
             resultName(result) + ")";
    return d;
  }
  d.outcome = SubscribeDecision::Fail;
  d.state = ring::State::Failed;
  d.text = "cuptiSubscribe_v2 failed: " + resultName(result);
  if (result == CUPTI_ERROR_UNKNOWN || result == CUPTI_ERROR_NOT_INITIALIZED)
    d.text += " (is there a GPU and a working CUDA driver?)";
  return d;
}

// ---- life cycle -------------------------------------------------------------------------

Collector::Collector(CuptiOps ops) : ops_(ops), sites_(python_, native_, scopes_) {}

Collector::~Collector() {
  if (forked_) return;
  running_ = false;
  stopFlushThread();
  if (subscriber_) {
    disableActivities();
    ops_.unsubscribe(subscriber_);
  }
  if (g_active.load() == this) setActiveCollector(nullptr);
  for (auto* b : freeBuffers_) std::free(b);
}

void Collector::setStatus(ring::State state, const std::string& text) {
  std::lock_guard<std::mutex> lock(producer_);
  ring_.setStatus(state, text);
  statusText_ = std::string(ring::stateName(state)) + ": " + text;
}

Result<void> Collector::fail(ring::State state, const std::string& text) {
  setStatus(state, text);
  return Error{errors::kGpuUnavailable, text, true};
}

std::string Collector::statusLine() const {
  std::lock_guard<std::mutex> lock(producer_);
  return statusText_.empty() ? std::string("not started") : statusText_;
}

Result<void> Collector::prepare(const Config& config) {
  config_ = config;
  pid_ = static_cast<std::uint32_t>(getpid());
  if (!ring_.isOpen()) {
    if (auto made = ring_.create(config.dir, config.session, config.ringBytes, config.mode); !made) return made;
  }
  if (!namesLoaded_) {
    names_.load();
    namesLoaded_ = true;
#ifdef STRATA_COLLECTOR_LIBRARY
    // The frames between CUPTI's callback and the program's call belong to these.
    native_.skipModules({"libcupti.so", "libcuda.so", "libcudart.so", "libstrata_cupti.so"},
                        reinterpret_cast<const void*>(&strata_gpu_error_stop));
#else
    native_.skipModules({"libcupti.so", "libcuda.so", "libcudart.so"}, nullptr);
#endif
    native_.keyModules(kCudaLibraries);
  }
  std::lock_guard<std::mutex> lock(producer_);
  if (!publisher_) publisher_ = std::make_unique<Publisher>(ring_, pid_, &join_);
  return {};
}

Result<void> Collector::runWithoutCupti(const Config& config) {
  std::lock_guard<std::mutex> control(control_);
  if (auto prepared = prepare(config); !prepared) return prepared;
  mode_ = config.mode;
  errorsOn_ = config.errors != Config::Errors::Off;
  {
    std::lock_guard<std::mutex> lock(producer_);
    publisher_->expectSites(config.mode == ring::Mode::Stacks);
  }
  running_ = config.mode != ring::Mode::Off;
  ring_.setMode(config.mode);
  pythonHooked_ = false;
  hookAttempts_ = 0;
  lastHookNs_ = 0;
  if (config.mode == ring::Mode::Stacks) maybeHookPython();
  if (!running_) {
    setStatus(ring::State::Off, "mode off: nothing is collected");
    return {};
  }
  if (config.profileCount) requestProfile(config.profileKernel, config.profileCount, 0);
  if (!flushThread_.joinable()) startFlushThread();
  setStatus(ring::State::Collecting, "collecting without CUPTI (test)");
  return {};
}

Result<void> Collector::start(const Config& config) {
  std::lock_guard<std::mutex> control(control_);
  if (forked_) return Error{errors::kGpuCollectionState, "this is a forked child of the process the collector started in", true};
  if (running_) return Error{errors::kGpuCollectionState, "already collecting (" + std::string(ring::modeName(mode())) + ")", true};
  if (auto prepared = prepare(config); !prepared) return prepared;
  setActiveCollector(this);
  mode_ = config.mode;
  ring_.setMode(config.mode);
  if (config.mode == ring::Mode::Off) {
    setStatus(ring::State::Off, "mode off: nothing is collected");
    return {};
  }
  setStatus(ring::State::Starting, "starting");

  std::uint32_t version = 0;
  if (CUptiResult r = ops_.getVersion(&version); r != CUPTI_SUCCESS)
    return fail(ring::State::Failed, "cuptiGetVersion failed: " + resultName(r));
  ring_.setVersions(version, CUPTI_API_VERSION);
  if (auto refusal = versionRefusal(version, CUPTI_API_VERSION)) return fail(ring::State::Refused, *refusal);

  if (!subscriber_) {
    char old[2 * CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "Strata";
    params.oldSubscriberName = old;
    params.oldSubscriberSize = sizeof old;
    CUpti_SubscriberHandle handle = nullptr;
    const CUptiResult r = ops_.subscribe(&handle, &callbackTrampoline, this, &params);
    old[sizeof old - 1] = 0;
    SubscribeDecision d = decideSubscribe(r, old, pid_);
    if (d.outcome != SubscribeDecision::Proceed) return fail(d.state, d.text);
    subscriber_ = handle;
  }
  finalizePending_ = false;  // a stop whose finalize had not happened yet is undone

  auto undo = [&](const std::string& why) {
    disableActivities();
    ops_.unsubscribe(subscriber_);
    subscriber_ = nullptr;
    return fail(ring::State::Failed, why);
  };
  if (CUptiResult r = cuptiActivityRegisterCallbacks(&requestTrampoline, &completeTrampoline); r != CUPTI_SUCCESS)
    return undo("cuptiActivityRegisterCallbacks failed: " + resultName(r));
  std::string notes;
  if (CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM); r != CUPTI_SUCCESS)
    notes += " thread ids are CUPTI's own, not OS ids (" + resultName(r) + ");";
  cuptiFlushPeriod_ = cuptiActivityFlushPeriod(config.flushPeriodMs) == CUPTI_SUCCESS;
  if (auto enabled = enableActivities(notes); !enabled) return undo(enabled.error().message);

  errorsOn_ = config.errors != Config::Errors::Off;
  enableCallbacks(true);
  {
    std::lock_guard<std::mutex> lock(producer_);
    publisher_->expectSites(config.mode == ring::Mode::Stacks);
  }
  running_ = true;
  if (config.profileCount) requestProfile(config.profileKernel, config.profileCount, 0);
  startFlushThread();
  // The autograd wrapper goes in before the first backward() when torch is already imported
  // (a late start, or CUDA initialized by torch); otherwise the first launch without Python
  // frames asks again.
  pythonHooked_ = false;
  hookAttempts_ = 0;
  lastHookNs_ = 0;
  if (config.mode == ring::Mode::Stacks) maybeHookPython();
  std::string text = "collecting (" + std::string(ring::modeName(config.mode)) + ") into " + ring_.path();
  if (!std::getenv("NVTX_INJECTION64_PATH")) notes += " NVTX ranges off (NVTX_INJECTION64_PATH not set);";
  if (!notes.empty()) text += ";" + notes;
  setStatus(ring::State::Collecting, text);
  return {};
}

Result<void> Collector::stop() {
  std::lock_guard<std::mutex> control(control_);
  if (!running_) return Error{errors::kGpuCollectionState, "GPU collection is not running (" + statusLine() + ")", true};
  running_ = false;
  stopFlushThread();
  {
    std::lock_guard<std::mutex> lock(profileMutex_);
    endProfileRequest();
  }
  // A launch being measured right now tears its profiler down itself at its exit.
  if (!profileBusy_.exchange(true, std::memory_order_acquire)) {
    profiler_.teardown();
    profileBusy_.store(false, std::memory_order_release);
  }
  if (profileCallbacks_.exchange(false)) enableLaunchCallbacks(false);
  enableCallbacks(false);
  disableActivities();
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drainSites();
  describeDevices();
  // cuptiFinalize is only safe at an API's exit: the next call of any thread does it.
  finalizePending_ = true;
  cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
  std::string text = "stopped; CUPTI is released at the next CUDA call";
  if (flushed != CUPTI_SUCCESS) text += "; the last flush failed: " + resultName(flushed);
  setStatus(ring::State::Stopped, text);
  return {};
}

Result<void> Collector::flush() {
  if (!running_) return Error{errors::kGpuCollectionState, "GPU collection is not running", true};
  if (CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    return Error{errors::kGpuUnavailable, "cuptiActivityFlushAll failed: " + resultName(r), true};
  return {};
}

void Collector::onExit() {
  if (forked_ || !running_.exchange(false)) return;
  stopFlushThread();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drainSites();
  describeDevices();  // a program shorter than a flush period had its devices described by no one
  setStatus(ring::State::Stopped, "the process is exiting");
}

void Collector::onForkChild() {
  // Only flags: the parent's threads, locks and CUPTI state are not the child's.
  forked_ = true;
  running_ = false;
  ring_.abandon();
}

void Collector::setErrorHook(StrataGpuErrorHook hook, void* user) {
  hookUser_.store(user, std::memory_order_relaxed);
  hook_.store(hook, std::memory_order_release);
}

// Only while collecting: any CUPTI call after a stop would bring CUPTI back into the process.
bool Collector::pushExternalId(std::uint64_t id) {
  return running_ && cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS;
}

bool Collector::popExternalId() {
  std::uint64_t last = 0;
  return running_ && cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last) == CUPTI_SUCCESS;
}

// ---- flush thread -----------------------------------------------------------------------

void Collector::startFlushThread() {
  flushStop_ = false;
  // Created with every signal blocked, so the program's signals never land on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  flushThread_ = std::thread([this] { flushLoop(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Collector::stopFlushThread() {
  if (!flushThread_.joinable()) return;
  flushStop_ = true;
  if (ring_.isOpen()) ring::futexWakeAll(ring_.flushRequestWord());
  flushThread_.join();
}

void Collector::flushLoop() {
  pthread_setname_np(pthread_self(), "strata-gpu");
  std::uint32_t served = std::atomic_ref<std::uint32_t>(ring_.header()->flushDone).load(std::memory_order_acquire);
  const std::uint64_t period = std::uint64_t{config_.flushPeriodMs} * 1000000ull;
  while (!flushStop_) {
    ring_.heartbeat();
    takeProfileRequest();
    drainSites();
    describeDevices();
    // A request done: the launch callbacks it alone needed go off again (no lasting cost).
    if (!profilePending_.load(std::memory_order_relaxed) && profileCallbacks_.exchange(false)) enableLaunchCallbacks(false);
    const std::uint32_t request = ring_.flushRequested();
    if (request != served) {
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      ring_.markFlushed(request);
      served = request;
    } else if (!cuptiFlushPeriod_) {
      cuptiActivityFlushAll(0);
    }
    ring::futexWait(ring_.flushRequestWord(), request, period);
  }
}

// ---- buffers ----------------------------------------------------------------------------

void Collector::onBufferRequested(std::uint8_t** buffer, std::size_t* size, std::size_t* maxRecords) {
  *buffer = nullptr;
  *size = 0;
  *maxRecords = 0;
  try {
    const std::size_t want = config_.bufferBytes;
    // Beyond the bound CUPTI gets no buffer and drops records, which it counts for us.
    if (outstanding_.load(std::memory_order_relaxed) + want > config_.bufferTotalBytes) return;
    std::uint8_t* b = nullptr;
    {
      std::lock_guard<std::mutex> lock(buffersMutex_);
      if (!freeBuffers_.empty()) {
        b = freeBuffers_.back();
        freeBuffers_.pop_back();
      }
    }
    if (!b) b = static_cast<std::uint8_t*>(std::aligned_alloc(8, want));
    if (!b) return;
    outstanding_.fetch_add(want, std::memory_order_relaxed);
    *buffer = b;
    *size = want;
  } catch (...) {
  }
}

void Collector::onBufferCompleted(CUcontext context, std::uint32_t streamId, std::uint8_t* buffer, std::size_t size,
                                  std::size_t validSize) {
  try {
    // Sites first: every site a record of this buffer names was made before the buffer completed.
    if (!forked_) drainSites();
    thread_local std::vector<ParsedActivity> items;
    items.clear();
    // Read without the producer lock: cuptiActivityGetNextRecord is a CUPTI call.
    if (buffer && validSize && !forked_) parseActivityBuffer(buffer, validSize, names_, items);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, streamId, &dropped) != CUPTI_SUCCESS) dropped = 0;
    if (!forked_) {
      std::lock_guard<std::mutex> lock(producer_);
      if (publisher_) publisher_->publish(items.data(), items.size());
    }
    ring_.addCuptiDropped(dropped);
  } catch (...) {
  }
  if (!buffer) return;
  const std::size_t had = outstanding_.load(std::memory_order_relaxed);
  outstanding_.fetch_sub(std::min(had, size), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(buffersMutex_);
  if (size == config_.bufferBytes && freeBuffers_.size() < kBuffersKept) freeBuffers_.push_back(buffer);
  else std::free(buffer);
}

// ---- callbacks --------------------------------------------------------------------------

void Collector::onCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (forked_.load(std::memory_order_relaxed)) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_STATE) {
      if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        auto* s = static_cast<const CUpti_StateData*>(data);
        running_ = false;
        setStatus(ring::State::Failed, "CUPTI reported a fatal error and detached itself: " +
                                           std::string(s && s->notification.message ? s->notification.message : "") +
                                           " (" + resultName(s ? s->notification.result : CUPTI_ERROR_UNKNOWN) + ")");
      }
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (running_.load(std::memory_order_relaxed)) onResource(cbid, data);
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    auto* cb = static_cast<const CUpti_CallbackData*>(data);
    ThreadState& t = t_state;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      if (!running_.load(std::memory_order_relaxed)) return;
      if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) ++t.runtimeDepth;
      // A driver launch made inside a runtime launch is the same launch.
      if (isLaunchCallback(domain, cbid) && !(domain == CUPTI_CB_DOMAIN_DRIVER_API && t.runtimeDepth > 0))
        onLaunch(domain, cbid, cb);
      return;
    }
    profiledExit(domain, cbid, cb);
    if (finalizePending_.load(std::memory_order_acquire) && finalizePending_.exchange(false)) {
      const CUptiResult r = cuptiFinalize();
      subscriber_ = nullptr;
      setStatus(ring::State::Stopped, r == CUPTI_SUCCESS ? "stopped; CUPTI released"
                                                         : "stopped; cuptiFinalize failed: " + resultName(r));
      return;
    }
    if (running_.load(std::memory_order_relaxed)) onApiExit(domain, cbid, cb);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && t.runtimeDepth > 0 && --t.runtimeDepth == 0) t.pending = false;
    if (t.inLaunch && isLaunchCallback(domain, cbid) && !(domain == CUPTI_CB_DOMAIN_DRIVER_API && t.runtimeDepth > 0))
      t.inLaunch = false;
  } catch (...) {
  }
}

void Collector::onLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  ThreadState& t = t_state;
  t.lastCorrelation = cb->correlationId;
  t.lastSite = 0;
  // Copied every time: CUPTI does not promise the name's memory outlives the callback.
  const char* symbol = isGraphLaunch(domain, cbid) ? "(CUDA graph launch)" : cb->symbolName;
  const std::size_t length = symbol ? strnlen(symbol, sizeof t.lastKernel - 1) : 0;
  if (length) std::memcpy(t.lastKernel, symbol, length);
  t.lastKernel[length] = 0;
  // A request the reader just wrote is taken here, not only by the flush thread: the launch that
  // follows the request is the first measured.
  if (ring_.profileRequestWaiting()) takeProfileRequest();
  if (profilePending_.load(std::memory_order_relaxed) && !isGraphLaunch(domain, cbid)) maybeProfile(domain, cbid, cb);
  if (mode() != ring::Mode::Stacks) return;
  t.inLaunch = true;
  const char* api = names_.name(domain, cbid);
  const std::uint64_t launched = launchedObject(domain, cbid, cb);
  SiteTable::Lookup found = sites_.lookup(cbid, static_cast<std::uint16_t>(domain), api, launched);
  if (found.noSlot) {
    // Every slot holds a new site no one has named yet: name them here, once, and look again.
    drainSites();
    found = sites_.lookup(cbid, static_cast<std::uint16_t>(domain), api, launched);
  }
  // Without process_vm_readv the names must be read while the frames still run.
  if (found.fresh && !python_.resolvesLater()) drainSites();
  if (found.site == 0) ring_.addSitesOverflowed(1);
  join_.set(cb->correlationId, found.site);
  t.lastSite = found.site;
  if (found.attribution == SiteAttribution::None && !pythonHooked_.load(std::memory_order_relaxed)) maybeHookPython();
}

void Collector::onResource(CUpti_CallbackId cbid, const void* data) {
  if (mode() != ring::Mode::Stacks) return;
  if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
  auto* resource = static_cast<const CUpti_ResourceData*>(data);
  auto* graph = resource ? static_cast<const CUpti_GraphData*>(resource->resourceDescriptor) : nullptr;
  if (!graph) return;
  std::uint64_t node = 0;
  if (ops_.graphNodeId(graph->node, &node) != CUPTI_SUCCESS) return;
  std::uint32_t site = 0;
  ring::GraphNodeOrigin origin = ring::GraphNodeOrigin::Captured;
  ThreadState& t = t_state;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    std::uint64_t original = 0;
    if (ops_.graphNodeId(graph->originalNode, &original) != CUPTI_SUCCESS) return;
    std::lock_guard<std::mutex> lock(graphMutex_);
    auto it = graphNodes_.find(original);
    if (it == graphNodes_.end()) return;
    site = it->second;
    origin = ring::GraphNodeOrigin::Cloned;
  } else if (t.inLaunch) {
    site = t.lastSite;  // stream capture: the launch being captured made the node
  } else {
    // cudaGraphAddKernelNode and the like: the call that adds the node is its site.
    origin = ring::GraphNodeOrigin::Added;
    SiteTable::Lookup found = sites_.lookup(cbid, static_cast<std::uint16_t>(CUPTI_CB_DOMAIN_RESOURCE), "cudaGraphAddNode");
    if (found.noSlot) {
      drainSites();
      found = sites_.lookup(cbid, static_cast<std::uint16_t>(CUPTI_CB_DOMAIN_RESOURCE), "cudaGraphAddNode");
    }
    site = found.site;
  }
  if (!site) return;
  {
    std::lock_guard<std::mutex> lock(graphMutex_);
    if (graphNodes_.size() < (std::size_t{1} << 20)) graphNodes_[node] = site;
  }
  drainSites();  // the site's message goes before the node's
  std::lock_guard<std::mutex> lock(producer_);
  if (!publisher_) return;
  publisher_->addGraphNode(node, site, origin);
  publisher_->flushPending();
}


// ---- profile requests (the rest is in collector_profile.cpp) --------------------------

__attribute__((noinline)) int Collector::programPcs(std::uint64_t* pcs, int max) {
  return native_.capture(pcs, max, 1);
}

}  // namespace strata::cuda::collector
