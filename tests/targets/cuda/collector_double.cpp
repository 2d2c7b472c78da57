// The test build of libstrata_cupti.so (tests/targets/cuda/CMakeLists.txt): the collector's own
// sources plus this one export, which makes the CUPTI callbacks that a kernel launch and a
// failing cudaDeviceSynchronize make, so a sticky error reaches the error hook and
// strata_gpu_error_stop through the collector's real code on a machine without a GPU. Only
// the tests load it; the library users get has no such entry.
#include <cstdlib>

#include "collector.hpp"

namespace {

using namespace strata::cuda::collector;

void callback(Collector& c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
              std::uint32_t correlation, const char* symbol, int* result) {
  CUpti_CallbackData cb{};
  cb.callbackSite = site;
  cb.functionName = "?";
  cb.symbolName = symbol;
  cb.correlationId = correlation;
  cb.functionReturnValue = result;
  c.onCallback(domain, cbid, &cb);
}

}  // namespace

// `config` as for strata_gpu_start; the collector runs as if CUPTI had subscribed it. Returns
// `result` after the failing call's exit (where the hook and the stop ran), -1/-2 when the
// collector could not run.
extern "C" __attribute__((visibility("default"))) int strata_gpu_test_sticky_error(const char* config,
                                                                                 const char* kernel, int result) {
  Collector& c = processCollector();
  auto settings = configFromEnvironment([](const char* name) { return std::getenv(name); });
  if (settings && config) settings = parseConfig(config, *settings);
  if (!settings) return -2;
  static bool running = false;
  if (!running) {
    if (!c.runWithoutCupti(*settings)) return -1;
    running = true;
  }
  int ok = 0;
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, 7, kernel, &ok);
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, 7, kernel, &ok);
  int failed = result;
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_ENTER, 8,
           nullptr, &failed);
  callback(c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, CUPTI_API_EXIT, 8,
           nullptr, &failed);
  return failed;
}
