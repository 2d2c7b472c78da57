// Hardware metrics of single kernel launches through CUPTI's range profiler (auto range, kernel
// replay): SM and DRAM throughput, achieved occupancy and the kernel's duration. The collector
// measures the launches a profile request names (collector.cpp); this is the CUPTI side.
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.hpp"

namespace strata::cuda::collector {

// What is measured, in this order (MetricValues's fields).
inline constexpr const char* kProfileMetrics[] = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "gpu__time_duration.sum",
};
inline constexpr std::size_t kProfileMetricCount = sizeof kProfileMetrics / sizeof kProfileMetrics[0];

struct MetricValues {
  double smThroughputPct = 0, dramThroughputPct = 0, achievedOccupancyPct = 0, durationNs = 0;
};

// The sentence a user reads when `call` answered `result`: for CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
// the permission that is missing, for CUPTI_ERROR_UNKNOWN/NOT_INITIALIZED that there is no GPU or
// driver, else the call and its result. Always ends saying tracing goes on.
std::string profilingFailure(std::string_view call, CUptiResult result, std::uint32_t pid);

// Whether a kernel's name (as launched: usually mangled) matches a request's name part: a
// substring of it, or of its demangled form.
bool kernelNameMatches(std::string_view part, const char* name);

// The host half of the configuration, which needs no device: the config image scheduling
// kProfileMetrics on `chip` ("GH100", as cuptiDeviceGetChipName names it) and the replay passes
// it takes. The host object stays for evaluating counter data (null when building failed).
struct HostConfig {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> image;
  std::size_t passes = 0;
  CUptiResult result = CUPTI_SUCCESS;  // of the failing call
  std::string failedCall;
};
HostConfig buildHostConfig(const std::string& chip);
void releaseHostConfig(HostConfig& config);

// One context's range profiler, set up at the first measured launch and torn down after the
// last (teardown(), or the destructor): between them every launch in the context is replayed
// as often as the metrics need, so it never outlives a request. Not thread-safe: the collector
// lets one launch at a time through.
class RangeProfiler {
 public:
  RangeProfiler() = default;
  ~RangeProfiler() { teardown(); }
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // At the launch's API entry: sets the profiler up on `context` (first time, or after another
  // context) and starts a range. On failure, failedCall()/result() say which call and why.
  bool begin(CUcontext context, std::uint32_t device);
  // At the same launch's API exit: stops, decodes and evaluates the one range.
  bool end(MetricValues& out);
  void teardown();

  bool enabled() const { return object_ != nullptr; }
  std::size_t passes() const { return host_.passes; }
  CUptiResult result() const { return result_; }
  const std::string& failedCall() const { return failedCall_; }

 private:
  bool fail(const char* call, CUptiResult result);

  bool initialized_ = false;  // cuptiProfilerInitialize succeeded
  CUcontext context_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  HostConfig host_;
  std::vector<std::uint8_t> counterData_;
  CUptiResult result_ = CUPTI_SUCCESS;
  std::string failedCall_;
};

}  // namespace strata::cuda::collector
