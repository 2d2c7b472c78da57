// Hardware metrics through the real libcupti where it works without a GPU: the host-side
// configuration of the metrics for a named chip, the failure sentences, kernel name matching,
// and a profile request taken by the collector's flush thread and met by the launch callback
// (which, without a device, answers with the reason in the ring).
#include <cupti.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <thread>

#include "collector.hpp"
#include "metric_profiler.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;
using namespace strata::cuda::test;

namespace {

struct Launch {
  Collector& c;
  std::uint32_t correlation;
  const char* symbol;
  void run() {
    int result = 0;
    CUpti_CallbackData cb{};
    cb.functionName = "cudaLaunchKernel";
    cb.symbolName = symbol;
    cb.correlationId = correlation;
    cb.functionReturnValue = &result;
    for (auto site : {CUPTI_API_ENTER, CUPTI_API_EXIT}) {
      cb.callbackSite = site;
      c.onCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
    }
  }
};

bool waitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

}  // namespace

TEST_CASE("the metrics' configuration for a chip is built by CUPTI's host API without a device") {
  for (const char* chip : {"GH100", "GA100", "TU102"}) {
    CAPTURE(chip);
    HostConfig c = buildHostConfig(chip);
    REQUIRE_MESSAGE(c.host != nullptr, c.failedCall << ": " << c.result);
    CHECK(c.failedCall.empty());
    CHECK(c.image.size() > 1000);  // a scheduling image for four metrics (11200 bytes for GH100 in CUDA 13.0)
    CHECK(c.passes >= 1);
    releaseHostConfig(c);
    CHECK(c.host == nullptr);
  }
  HostConfig none = buildHostConfig("NOT_A_CHIP");
  CHECK(none.host == nullptr);
  CHECK(none.failedCall == "cuptiProfilerHostInitialize");
  CHECK(none.result != CUPTI_SUCCESS);
}

TEST_CASE("a profiling failure says what is missing: the permission, or the GPU") {
  const std::string denied = profilingFailure("cuptiRangeProfilerEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, 77);
  CHECK(denied.find("no hardware metrics in process 77: reading the GPU's performance counters is restricted to "
                    "administrators on this machine (cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35))") == 0);
  for (const char* must : {"root", "CAP_SYS_ADMIN", "CAP_PERFMON from driver R565",
                           "NVreg_RestrictProfilingToAdminUsers=0", "ERR_NVGPUCTRPERM"})
    CHECK_MESSAGE(denied.find(must) != std::string::npos, must);
  CHECK(denied.ends_with("; tracing goes on"));
  CHECK(profilingFailure("cuptiProfilerInitialize", CUPTI_ERROR_UNKNOWN, 5) ==
        "no hardware metrics in process 5: cuptiProfilerInitialize failed: CUPTI_ERROR_UNKNOWN (999) (is there a GPU "
        "and a working CUDA driver?); tracing goes on");
  CHECK(profilingFailure("cuptiRangeProfilerEnable", CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, 5)
            .find("does not support CUPTI's range profiler (cuptiRangeProfilerEnable: CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED") !=
        std::string::npos);
}

TEST_CASE("a request's name part matches the kernel's name as launched or demangled") {
  CHECK(kernelNameMatches("vector_add", "_Z10vector_addPKfS0_Pfi"));
  CHECK(kernelNameMatches("vector_add(float const*", "_Z10vector_addPKfS0_Pfi"));
  CHECK(kernelNameMatches("triton_", "triton_poi_fused_0"));
  CHECK_FALSE(kernelNameMatches("relu", "_Z10vector_addPKfS0_Pfi"));
  CHECK_FALSE(kernelNameMatches("relu", nullptr));
  CHECK_FALSE(kernelNameMatches("", "relu"));
}

TEST_CASE("without a device the range profiler's first call fails, and says so") {
  if (nvidiaDriverLoaded()) {
    reportSkip("without a device the range profiler's first call fails, and says so",
               "a GPU and its driver are present: the no-device answer cannot be seen here (the GPU check measures "
               "metrics on the device: tools/gpu_check_metrics.py)");
    return;
  }
  RangeProfiler p;
  REQUIRE_FALSE(p.begin(nullptr, 0));
  CHECK(p.failedCall() == "cuptiProfilerInitialize");
  CHECK(p.result() == CUPTI_ERROR_UNKNOWN);
  CHECK_FALSE(p.enabled());
}

TEST_CASE("a profile request reaches the launch callback through the ring; a refused launch ends it with the reason") {
  ScratchDir dir;
  Collector c;
  Config config;
  config.dir = dir.path();
  config.session = "t";
  config.mode = ring::Mode::Trace;
  REQUIRE(c.runWithoutCupti(config).ok());
  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  CHECK_FALSE(c.profilePending());
  REQUIRE(reader.requestProfile("vector_add", 2) == 1);
  REQUIRE(waitFor([&] { return c.profilePending(); }));  // the flush thread took it

  std::thread([&] {
    Launch{c, 5, "_Z4reluPf"}.run();  // not the kernel asked for
    Launch{c, 6, "_Z10vector_addPKfS0_Pfi"}.run();
    Launch{c, 7, "_Z10vector_addPKfS0_Pfi"}.run();  // the request ended at the first refusal
  }).join();
  CHECK_FALSE(c.profilePending());
  b.clear();
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b.metrics.size() == 1);
  const KernelMetricsEvent& e = b.metrics[0];
  const KernelMetrics& m = e.metrics;
  CHECK(m.correlation == 6);
  CHECK(m.kernel == "_Z10vector_addPKfS0_Pfi");
  CHECK(m.request % 2 == 0);
  CHECK(m.request != 0);
  CHECK(m.result != 0);
  CHECK(m.error.find("no hardware metrics in process " + std::to_string(getpid()) + ": ") == 0);
  CHECK(m.error.ends_with("; tracing goes on"));
  if (m.result == CUPTI_ERROR_UNKNOWN)  // this machine: no GPU, no driver
    CHECK(m.error.find("cuptiProfilerInitialize failed: CUPTI_ERROR_UNKNOWN (999) (is there a GPU and a working CUDA driver?)") !=
          std::string::npos);
  CHECK_FALSE(m.smThroughputPct);
}

TEST_CASE("STRATA_GPU_PROFILE asks at start: request 0, met by the first matching launch") {
  ScratchDir dir;
  Collector c;
  Config config;
  config.dir = dir.path();
  config.session = "t";
  config.mode = ring::Mode::Trace;
  config.profileKernel = "gemm";
  config.profileCount = 3;
  REQUIRE(c.runWithoutCupti(config).ok());
  CHECK(c.profilePending());
  std::thread([&] { Launch{c, 9, "_Z4gemmPfS_S_i"}.run(); }).join();
  SessionReader reader(dir.path(), "t");
  Batch b;
  REQUIRE(reader.poll(b).ok());
  REQUIRE(b.metrics.size() == 1);
  CHECK(b.metrics[0].metrics.request == 0);
  CHECK(b.metrics[0].metrics.correlation == 9);
  CHECK_FALSE(b.metrics[0].metrics.error.empty());
}
