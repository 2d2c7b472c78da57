// Sticky CUDA errors inside the collector (see the README's "CUDA errors and the stop hook"):
// watched at API exits, reported once by the call the program made, with the program's call and
// the last kernel this thread launched, to the ring, the registered hook and the native
// debugger's breakpoint.
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "collector.hpp"
#include "sticky_errors.hpp"

namespace strata::cuda::collector {
void Collector::onApiExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  if (!errorsOn_.load(std::memory_order_relaxed) || !cb->functionReturnValue) return;
  ThreadState& t = threadState();
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

void Collector::reportCudaError(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int result, const char* errorName,
                                const CUpti_CallbackData* cb) {
  ThreadState& t = threadState();
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
