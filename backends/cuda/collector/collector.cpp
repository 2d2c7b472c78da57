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

std::uint64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

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
thread_local ThreadState t_state;

// Queries frequent enough to swamp the API records without telling anything (Kineto drops
// the first few of these too).
constexpr CUpti_CallbackId kQuietRuntime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v2_ptsz_v11030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
};
constexpr CUpti_CallbackId kQuietDriver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,          CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,     CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,              CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,           CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,   CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,         CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,       CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,       CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_ptsz, CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2_ptsz, CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3_ptsz,
};

// Where programs see a sticky error: synchronizing calls, copies, sets, queries, allocation and
// the error getters (torch calls cudaGetLastError after every launch). Their exits are watched
// with STRATA_GPU_ERRORS=1; the launches themselves are not, so a launch costs no callback.
constexpr CUpti_CallbackId kSyncRuntime[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,      CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000,       CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,                 CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,            CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_v3020,               CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2D_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,          CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_v3020,         CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyToSymbol_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_v3020,       CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyFromSymbol_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000,             CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,                 CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,            CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,                 CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020,             CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,           CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020,             CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,           CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
};
constexpr CUpti_CallbackId kSyncDriver[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,           CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,        CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,         CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
    CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,         CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,                   CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,              CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,            CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,            CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,            CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,       CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,       CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,       CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,              CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,             CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,              CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,            CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,             CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz,
};

// CUDA's libraries that launch for the program: a launch key is made of their callers' frames.
const std::vector<std::string> kCudaLibraries = {"libcublas", "libcudnn", "libcufft",   "libcurand",   "libcusparse",
                                                 "libcusolver", "libnccl", "libnvrtc", "libnvJitLink", "libnvToolsExt"};

constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,           CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

bool isGraphLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API
             ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                   cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000
             : cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

// What a launch launches, from the call's parameters: the kernel's host function (runtime), its
// CUfunction (driver), the executable graph; else a hash of the kernel's name (CUDA 13's
// ___cudaLaunchKernel, whose parameters its headers do not describe). A launch key made of it
// and the Python line needs no unwinding.
std::uint64_t launchedObject(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (const void* p = cb->functionParams) {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      switch (cbid) {
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
          return reinterpret_cast<std::uint64_t>(static_cast<const cudaLaunchKernel_v7000_params*>(p)->func);
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
          return reinterpret_cast<std::uint64_t>(static_cast<const cudaLaunchKernelExC_v11060_params*>(p)->func);
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
          return reinterpret_cast<std::uint64_t>(static_cast<const cudaLaunchCooperativeKernel_v9000_params*>(p)->func);
        case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
          return reinterpret_cast<std::uint64_t>(static_cast<const cudaGraphLaunch_v10000_params*>(p)->graphExec);
        default: break;
      }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
          return reinterpret_cast<std::uint64_t>(static_cast<const cuLaunchKernel_params*>(p)->f);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
          return reinterpret_cast<std::uint64_t>(static_cast<const cuLaunchKernelEx_params*>(p)->f);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
          return reinterpret_cast<std::uint64_t>(static_cast<const cuLaunchCooperativeKernel_params*>(p)->f);
        case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
        case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
          return reinterpret_cast<std::uint64_t>(static_cast<const cuGraphLaunch_params*>(p)->hGraph);
        default: break;
      }
    }
  }
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (const char* c = cb->symbolName; c && *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
  return h;
}

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

bool isLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (auto id : kRuntimeLaunches)
      if (id == cbid) return true;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (auto id : kDriverLaunches)
      if (id == cbid) return true;
  }
  return false;
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

Result<void> Collector::enableActivities(std::string& notes) {
  struct Kind {
    CUpti_ActivityKind kind;
    const char* name;
    bool required;
  };
  std::vector<Kind> kinds = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", true},
      {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", false},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", false},
      {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", false},
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", false},
      {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", false},
      {CUPTI_ACTIVITY_KIND_NAME, "NAME", false},
      {CUPTI_ACTIVITY_KIND_MARKER, "MARKER", false},
  };
  // One record per graph launch, and then none for the graph's nodes: off unless asked.
  if (config_.graphWhole) kinds.push_back({CUPTI_ACTIVITY_KIND_GRAPH_TRACE, "GRAPH_TRACE", false});
  // A record per API call costs every launch; only when asked (STRATA_GPU_API).
  if (config_.api != Config::Api::Off) {
    kinds.push_back({CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", false});
    kinds.push_back({CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", false});
  }
  for (const Kind& k : kinds) {
    const CUptiResult r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) {
      enabled_.push_back(k.kind);
      continue;
    }
    if (k.required) {
      std::string why = "cuptiActivityEnable(" + std::string(k.name) + ") failed: " + resultName(r);
      if (r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED) why += " (is there a GPU and a working CUDA driver?)";
      return Error{errors::kGpuUnavailable, why, true};
    }
    notes += " " + std::string(k.name) + " not available (" + resultName(r) + ");";
  }
  if (config_.api == Config::Api::All) {
    for (auto cbid : kQuietRuntime) cuptiActivityEnableRuntimeApi(cbid, 0);
    for (auto cbid : kQuietDriver) cuptiActivityEnableDriverApi(cbid, 0);
  } else if (config_.api == Config::Api::Launches) {
    // Every call off but the launches and the calls watched for errors (copies, sets,
    // synchronization, allocation).
    auto keep = [](const auto& list, std::uint32_t cbid) {
      return std::find(std::begin(list), std::end(list), cbid) != std::end(list);
    };
    for (std::uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid)
      if (!keep(kRuntimeLaunches, cbid) && !keep(kSyncRuntime, cbid)) cuptiActivityEnableRuntimeApi(cbid, 0);
    for (std::uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid)
      if (!keep(kDriverLaunches, cbid) && !keep(kSyncDriver, cbid)) cuptiActivityEnableDriverApi(cbid, 0);
  }
  return {};
}

void Collector::disableActivities() {
  for (auto kind : enabled_) cuptiActivityDisable(kind);
  enabled_.clear();
}

void Collector::enableCallbacks(bool on) {
  if (!subscriber_) return;
  const std::uint32_t flag = on ? 1 : 0;
  if (errorsOn_) enableErrorCallbacks(flag);
  if (mode() == ring::Mode::Stacks) {
    if (config_.errors != Config::Errors::All) enableLaunchCallbacks(on);
    // Graph nodes made (by stream capture or by adding them) and cloned into executable graphs:
    // a replayed kernel is tied to the line that captured it.
    cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
    cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  }
  cuptiEnableDomain(flag, subscriber_, CUPTI_CB_DOMAIN_STATE);
}

void Collector::enableErrorCallbacks(std::uint32_t flag) {
  if (config_.errors == Config::Errors::All) {
    // Every call's exit is where a sticky error shows.
    cuptiEnableDomain(flag, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cuptiEnableDomain(flag, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
    return;
  }
  for (auto cbid : kSyncRuntime) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (auto cbid : kSyncDriver) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
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

void Collector::drainSites() {
  std::lock_guard<std::mutex> drain(drain_);
  std::vector<RawSite*> raw;
  sites_.takePending(raw);
  if (raw.empty()) return;
  std::vector<CapturedSite> named;
  named.reserve(raw.size());
  for (const RawSite* r : raw) named.push_back(nameSite(*r, python_));
  sites_.release(raw);
  std::lock_guard<std::mutex> lock(producer_);
  if (!publisher_) return;
  for (const CapturedSite& c : named) publisher_->addSite(c);
  publisher_->flushPending();
}

int Collector::scopeEnter(int kind, int skip) {
  if (forked_.load(std::memory_order_relaxed) || !running_.load(std::memory_order_relaxed) ||
      mode() != ring::Mode::Stacks)
    return -1;
  return scopes_.enter(python_, kind, skip);
}

void Collector::scopeLeave(int slot) { scopes_.leave(slot); }

void Collector::pythonHooked(bool installed) { pythonHooked_.store(installed, std::memory_order_relaxed); }

namespace {

// A Python string literal of `text` (for the hook's source).
std::string pythonLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "'";
}

// Runs on the main thread, with the GIL (a pending call): torch's autograd engine wrapped so
// that the thread calling backward() says, on its way into the C++ engine, that it waits for
// the kernels autograd's threads are about to launch. `Variable._execution_engine.run_backward`
// is the one call torch 1.13 to 2.x make for backward() and autograd.grad().
constexpr const char* kAutogradHook = R"PY(
def install(path):
    import sys
    variable = sys.modules.get("torch.autograd.variable")
    engine = getattr(getattr(variable, "Variable", None), "_execution_engine", None)
    if engine is None:
        return 0
    if getattr(engine, "_strata_waits", False):
        return 1
    import ctypes
    lib = ctypes.PyDLL(path)
    enter, leave = lib.strata_gpu_scope_enter, lib.strata_gpu_scope_leave
    enter.argtypes, enter.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    leave.argtypes, leave.restype = (ctypes.c_int,), None

    class StrataAutogradEngine:
        """torch's autograd engine, telling Strata's GPU collector which Python line waits for
        the kernels its threads launch in backward()."""
        _strata_waits = True

        def run_backward(self, *args, **kwargs):
            scope = enter(1, 1)
            try:
                return engine.run_backward(*args, **kwargs)
            finally:
                leave(scope)

        def __getattr__(self, name):
            return getattr(engine, name)

    variable.Variable._execution_engine = StrataAutogradEngine()
    return 1

try:
    import ctypes as _ctypes
    _ctypes.PyDLL(PATH).strata_gpu_python_hooked(install(PATH))
except BaseException:
    pass
)PY";

int runAutogradHook(void* user) {
  auto* c = static_cast<Collector*>(user);
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&runAutogradHook), &info) || !info.dli_fname) return 0;
  std::string source = kAutogradHook;
  const std::string literal = pythonLiteral(info.dli_fname);
  for (std::size_t at; (at = source.find("PATH")) != std::string::npos;) source.replace(at, 4, literal);
  // Run in a namespace of its own: __main__ gets no name.
  c->python().runSimpleString(("exec(compile(" + pythonLiteral(source) +
                                ", '<strata-gpu-hooks>', 'exec'), {'__name__': 'strata_gpu_hooks'})")
                                   .c_str());
  return 0;  // a pending call that returns nonzero raises SystemError in the program
}

}  // namespace

void Collector::maybeHookPython() {
  if (pythonHooked_.load(std::memory_order_relaxed) || mode() != ring::Mode::Stacks) return;
  if (hookAttempts_.load(std::memory_order_relaxed) >= 20 || !python_.available()) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const std::int64_t now = std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  std::int64_t last = lastHookNs_.load(std::memory_order_relaxed);
  if (last && now - last < 1000000000) return;
  if (!lastHookNs_.compare_exchange_strong(last, now)) return;  // another thread asks now
  hookAttempts_.fetch_add(1, std::memory_order_relaxed);
  python_.addPendingCall(&runAutogradHook, this);
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

void Collector::onApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (!errorsOn_.load(std::memory_order_relaxed) || !cb->functionReturnValue) return;
  ThreadState& t = t_state;
  // cudaError_t and CUresult are both int-sized enums.
  int result = 0;
  std::memcpy(&result, cb->functionReturnValue, sizeof result);
  const char* name = stickyErrorName(domain, result);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (!name) return;
    if (t.runtimeDepth > 0) {
      // Reported by the runtime call the program made, at its exit.
      if (!t.pending) t.pendingResult = result, t.pending = true;
      return;
    }
    reportCudaError(domain, cbid, result, name, cb);
    return;
  }
  if (name) {
    reportCudaError(domain, cbid, result, name, cb);
  } else if (t.pending && t.runtimeDepth <= 1) {
    reportCudaError(domain, cbid, t.pendingResult, stickyErrorName(kDomainRuntime, t.pendingResult), cb);
  }
}

// ---- profile requests (the rest is in collector_profile.cpp) --------------------------

void Collector::enableLaunchCallbacks(bool on) {
  if (!subscriber_) return;
  const std::uint32_t flag = on ? 1 : 0;
  for (auto cbid : kRuntimeLaunches) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (auto cbid : kDriverLaunches) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

__attribute__((noinline)) int Collector::programPcs(std::uint64_t* pcs, int max) {
  return native_.capture(pcs, max, 1);
}

void Collector::reportCudaError(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int result, const char* errorName,
                                const CUpti_CallbackData* cb) {
  ThreadState& t = t_state;
  t.pending = false;
  ring_.countCudaError();
  // The context is dead after the first; the rest repeat it.
  if (errorReported_.exchange(true)) return;
  CudaErrorInfo info;
  info.result = result;
  info.domain = domain;
  info.cbid = cbid;
  info.tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  const char* api = names_.name(domain, cbid);
  info.api = api ? api : cb->functionName ? std::string(apiDisplayName(cb->functionName)) : "?";
  info.error = errorName ? errorName : "?";
  info.lastKernel = t.lastKernel;
  info.lastCorrelation = t.lastCorrelation;
  info.lastSite = t.lastSite;
  info.time = realtimeNs();
  std::uint64_t pcs[8];
  const int n = programPcs(pcs, 8);
  NativeStack::resolve(pcs, n, info.callers);
  if (n > 0) {
    info.callerPc = pcs[0];
    info.callerModule = info.callers[0].module;
    info.callerElfAddress = info.callers[0].elfAddress;
  }
  const std::string message = describeCudaError(info.api, info.error, result, info.lastKernel);
  drainSites();  // the last launch's site goes before the error that names it
  {
    std::lock_guard<std::mutex> lock(producer_);
    if (publisher_) {
      publisher_->addCudaError(info);
      publisher_->flushPending();
    }
  }
  StrataGpuError e{};
  e.size = sizeof e;
  e.result = result;
  e.domain = domain;
  e.cbid = cbid;
  e.tid = info.tid;
  e.lastCorrelation = info.lastCorrelation;
  e.lastSite = info.lastSite;
  e.callerPc = info.callerPc;
  e.api = info.api.c_str();
  e.error = info.error.c_str();
  e.lastKernel = info.lastKernel.c_str();
  e.message = message.c_str();
  if (StrataGpuErrorHook hook = hook_.load(std::memory_order_acquire)) hook(&e, hookUser_.load(std::memory_order_relaxed));
  strata_gpu_error_stop(&e);
}

}  // namespace strata::cuda::collector
