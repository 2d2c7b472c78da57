// What the collector asks of CUPTI: the activity kinds, the callbacks (launches, the calls
// watched for sticky errors, graph nodes), and what a launch launches (see collector.hpp).
#include <algorithm>

#include "collector.hpp"

namespace strata::cuda::collector {
namespace {

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

}  // namespace

bool isGraphLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API
             ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                   cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000
             : cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

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

void Collector::enableLaunchCallbacks(bool on) {
  if (!subscriber_) return;
  const std::uint32_t flag = on ? 1 : 0;
  for (auto cbid : kRuntimeLaunches) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  for (auto cbid : kDriverLaunches) cuptiEnableCallback(flag, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
}

}  // namespace strata::cuda::collector
