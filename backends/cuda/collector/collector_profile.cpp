// Profile requests inside the collector (see collector.hpp and the README's "Hardware
// metrics"): a request taken, a matching launch measured between its API entry and exit by the
// range profiler (metric_profiler.cpp), its answer or refusal published into the ring.
#include <ctime>

#include "collector.hpp"

namespace strata::cuda::collector {
namespace {

// The launch this thread is measuring (correlation != 0): its API exit ends the range.
struct Profiled {
  std::uint32_t correlation = 0;
  CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID;
  CUpti_CallbackId cbid = 0;
};
thread_local Profiled t_profiled;

}  // namespace

void Collector::requestProfile(const std::string& kernel, unsigned count, std::uint32_t request) {
  if (kernel.empty() || count == 0 || count > ring::kMaxProfileLaunches) {
    KernelMetricsInfo bad;
    bad.request = request;
    bad.error = "no hardware metrics in process " + std::to_string(pid_) + ": the profile request names no kernel or asks for " +
                std::to_string(count) + " launches (1 to " + std::to_string(ring::kMaxProfileLaunches) + ")";
    publishMetrics(bad);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(profileMutex_);
    profileKernel_ = kernel;
    profileLeft_ = count;
    profileRequest_ = request;
    profilePending_.store(true, std::memory_order_relaxed);
  }
  // Launches are seen at their entry only where stacks (or every call's errors) already
  // enabled their callbacks; otherwise for this request's life.
  const bool launchesSeen = mode() == ring::Mode::Stacks || (errorsOn_ && config_.errors == Config::Errors::All);
  if (!launchesSeen && !profileCallbacks_.exchange(true)) enableLaunchCallbacks(true);
}

void Collector::takeProfileRequest() {
  // The flush thread and launching threads may both find the request: one takes it.
  std::lock_guard<std::mutex> lock(profileTake_);
  std::string kernel;
  std::uint32_t count = 0, sequence = 0;
  if (ring_.takeProfileRequest(kernel, count, sequence)) requestProfile(kernel, count, sequence);
}

void Collector::endProfileRequest() {
  profileLeft_ = 0;
  profilePending_.store(false, std::memory_order_relaxed);
}

void Collector::publishMetrics(const KernelMetricsInfo& info) {
  KernelMetricsInfo m = info;
  if (!m.time) m.time = realtimeNs();
  std::lock_guard<std::mutex> lock(producer_);
  if (publisher_) {
    publisher_->addKernelMetrics(m);
    publisher_->flushPending();
  }
}

void Collector::maybeProfile(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  // One launch at a time: kernel replay serializes the context anyway.
  if (profileBusy_.exchange(true, std::memory_order_acquire)) return;
  std::string part;
  std::uint32_t request = 0;
  {
    std::lock_guard<std::mutex> lock(profileMutex_);
    if (profileLeft_ > 0) part = profileKernel_, request = profileRequest_;
  }
  if (part.empty() || !kernelNameMatches(part, cb->symbolName)) {
    profileBusy_.store(false, std::memory_order_release);
    return;
  }
  std::uint32_t device = 0;
  if (cuptiGetDeviceId(cb->context, &device) != CUPTI_SUCCESS) device = 0;
  profiledName_ = cb->symbolName ? cb->symbolName : "";
  profiledDevice_ = device;
  profiledRequest_ = request;
  if (!profiler_.begin(cb->context, device)) {
    // Whatever refused this launch (permissions, no support) refuses the next: the request ends.
    KernelMetricsInfo failed;
    failed.correlation = cb->correlationId;
    failed.device = device;
    failed.request = request;
    failed.kernel = profiledName_;
    failed.error = profilingFailure(profiler_.failedCall(), profiler_.result(), pid_);
    failed.result = static_cast<int>(profiler_.result());
    {
      std::lock_guard<std::mutex> lock(profileMutex_);
      if (profileRequest_ == request) endProfileRequest();
    }
    profiler_.teardown();
    publishMetrics(failed);
    profileBusy_.store(false, std::memory_order_release);
    return;
  }
  t_profiled = Profiled{cb->correlationId, domain, cbid};
}

void Collector::profiledExit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  Profiled& p = t_profiled;
  if (!p.correlation || cb->correlationId != p.correlation || domain != p.domain || cbid != p.cbid) return;
  const std::uint32_t correlation = p.correlation;
  p = Profiled{};
  finishProfile(correlation);
}

void Collector::finishProfile(std::uint32_t correlation) {
  MetricValues v;
  const bool measured = profiler_.end(v);
  KernelMetricsInfo info;
  info.correlation = correlation;
  info.device = profiledDevice_;
  info.request = profiledRequest_;
  info.passes = static_cast<std::uint32_t>(profiler_.passes());
  info.kernel = profiledName_;
  bool last = true;
  {
    std::lock_guard<std::mutex> lock(profileMutex_);
    if (profileRequest_ == profiledRequest_ && profileLeft_ > 0) {
      if (measured) {
        info.remaining = --profileLeft_;
        last = profileLeft_ == 0;
      }
      if (last) endProfileRequest();
    } else {
      last = !profilePending_.load(std::memory_order_relaxed);  // replaced by a newer request meanwhile
    }
  }
  if (measured) {
    info.smThroughputPct = v.smThroughputPct;
    info.dramThroughputPct = v.dramThroughputPct;
    info.achievedOccupancyPct = v.achievedOccupancyPct;
    info.durationNs = v.durationNs;
  } else {
    info.error = profilingFailure(profiler_.failedCall(), profiler_.result(), pid_);
    info.result = static_cast<int>(profiler_.result());
  }
  // After the last launch nothing of the profiler stays: later launches run unreplayed.
  if (last) profiler_.teardown();
  publishMetrics(info);
  profileBusy_.store(false, std::memory_order_release);
}

}  // namespace strata::cuda::collector
