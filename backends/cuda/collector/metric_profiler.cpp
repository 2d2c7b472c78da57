// The range profiler behind profile requests (see metric_profiler.hpp): auto range with kernel
// replay, one range per measured launch, the config image built once per context.
#include "metric_profiler.hpp"

#include "strata/demangle.hpp"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdlib>
#include <cstring>

namespace strata::cuda::collector {

std::string resultName(CUptiResult result);  // collector.cpp

namespace {

// A CUPTI parameter struct: zeroed, with the size this build knows.
template <class T>
T params(std::size_t size) {
  T p{};
  p.structSize = size;
  return p;
}

}  // namespace

std::string profilingFailure(std::string_view call, CUptiResult result, std::uint32_t pid) {
  const std::string where = " in process " + std::to_string(pid);
  std::string s;
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      s = "no hardware metrics" + where + ": reading the GPU's performance counters is restricted to administrators "
          "on this machine (" + std::string(call) + ": " + resultName(result) + "); run the program as root or with "
          "CAP_SYS_ADMIN (CAP_PERFMON from driver R565), or let every user profile by loading the nvidia kernel module "
          "with NVreg_RestrictProfilingToAdminUsers=0 (NVIDIA's ERR_NVGPUCTRPERM page explains both)";
      break;
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
      s = "no hardware metrics" + where + ": " + std::string(call) + " failed: " + resultName(result) +
          " (is there a GPU and a working CUDA driver?)";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      s = "no hardware metrics" + where + ": this GPU or its setup does not support CUPTI's range profiler (" +
          std::string(call) + ": " + resultName(result) + ")";
      break;
    default:
      s = "no hardware metrics" + where + ": " + std::string(call) + " failed: " + resultName(result);
  }
  return s + "; tracing goes on";
}

bool kernelNameMatches(std::string_view part, const char* name) {
  if (!name || part.empty()) return false;
  const std::string_view n(name);
  if (n.find(part) != std::string_view::npos) return true;
  if (n.size() < 2 || n[0] != '_' || n[1] != 'Z') return false;
  return demangle(n).find(part) != std::string::npos;
}

HostConfig buildHostConfig(const std::string& chip) {
  HostConfig c;
  auto failed = [&](const char* call, CUptiResult r) {
    c.failedCall = call;
    c.result = r;
    releaseHostConfig(c);
    return std::move(c);
  };
  auto init = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();
  if (CUptiResult r = cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS)
    return failed("cuptiProfilerHostInitialize", r);
  c.host = init.pHostObject;
  const char* names[kProfileMetricCount];
  for (std::size_t i = 0; i < kProfileMetricCount; ++i) names[i] = kProfileMetrics[i];
  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = c.host;
  add.ppMetricNames = names;
  add.numMetrics = kProfileMetricCount;
  if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS)
    return failed("cuptiProfilerHostConfigAddMetrics", r);
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = c.host;
  if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS)
    return failed("cuptiProfilerHostGetConfigImageSize", r);
  c.image.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = c.host;
  image.configImageSize = c.image.size();
  image.pConfigImage = c.image.data();
  if (CUptiResult r = cuptiProfilerHostGetConfigImage(&image); r != CUPTI_SUCCESS)
    return failed("cuptiProfilerHostGetConfigImage", r);
  auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = c.image.size();
  passes.pConfigImage = c.image.data();
  if (CUptiResult r = cuptiProfilerHostGetNumOfPasses(&passes); r != CUPTI_SUCCESS)
    return failed("cuptiProfilerHostGetNumOfPasses", r);
  c.passes = passes.numOfPasses;
  return c;
}

void releaseHostConfig(HostConfig& c) {
  if (!c.host) return;
  auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = c.host;
  cuptiProfilerHostDeinitialize(&p);
  c.host = nullptr;
}

bool RangeProfiler::fail(const char* call, CUptiResult result) {
  failedCall_ = call;
  result_ = result;
  return false;
}

bool RangeProfiler::begin(CUcontext context, std::uint32_t device) {
  if (object_ && context != context_) teardown();
  if (!initialized_) {
    // Every other profiler call needs this one to have succeeded: without a device some of them
    // crash instead of failing.
    auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (CUptiResult r = cuptiProfilerInitialize(&p); r != CUPTI_SUCCESS) return fail("cuptiProfilerInitialize", r);
    initialized_ = true;
  }
  if (!object_) {
    auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = device;
    if (CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) return fail("cuptiDeviceGetChipName", r);
    releaseHostConfig(host_);
    host_ = buildHostConfig(chip.pChipName ? chip.pChipName : "");
    if (!host_.host) return fail(host_.failedCall.c_str(), host_.result);
    auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    if (CUptiResult r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerEnable", r);
    object_ = enable.pRangeProfilerObject;
    context_ = context;
    const char* names[kProfileMetricCount];
    for (std::size_t i = 0; i < kProfileMetricCount; ++i) names[i] = kProfileMetrics[i];
    auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object_;
    size.pMetricNames = names;
    size.numMetrics = kProfileMetricCount;
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    if (CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&size); r != CUPTI_SUCCESS)
      return fail("cuptiRangeProfilerGetCounterDataSize", r);
    counterData_.assign(size.counterDataSize, 0);
  }
  // A fresh counter data image per launch: each launch is range 0 of its own.
  auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object_;
  init.counterDataSize = counterData_.size();
  init.pCounterData = counterData_.data();
  if (CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&init); r != CUPTI_SUCCESS)
    return fail("cuptiRangeProfilerCounterDataImageInitialize", r);
  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = object_;
  config.configSize = host_.image.size();
  config.pConfig = host_.image.data();
  config.counterDataImageSize = counterData_.size();
  config.pCounterDataImage = counterData_.data();
  config.range = CUPTI_AutoRange;
  config.replayMode = CUPTI_KernelReplay;
  config.maxRangesPerPass = 1;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 0;
  if (CUptiResult r = cuptiRangeProfilerSetConfig(&config); r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerSetConfig", r);
  auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = object_;
  if (CUptiResult r = cuptiRangeProfilerStart(&start); r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerStart", r);
  return true;
}

bool RangeProfiler::end(MetricValues& out) {
  if (!object_) return fail("cuptiRangeProfilerStop", CUPTI_ERROR_INVALID_OPERATION);
  auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = object_;
  if (CUptiResult r = cuptiRangeProfilerStop(&stop); r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerStop", r);
  // Kernel replay runs every pass inside the launch: all are in once it returned.
  if (!stop.isAllPassSubmitted) return fail("cuptiRangeProfilerStop (not every replay pass ran)", CUPTI_ERROR_NOT_READY);
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object_;
  if (CUptiResult r = cuptiRangeProfilerDecodeData(&decode); r != CUPTI_SUCCESS)
    return fail("cuptiRangeProfilerDecodeData", r);
  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counterData_.data();
  info.counterDataImageSize = counterData_.size();
  if (CUptiResult r = cuptiRangeProfilerGetCounterDataInfo(&info); r != CUPTI_SUCCESS)
    return fail("cuptiRangeProfilerGetCounterDataInfo", r);
  if (info.numTotalRanges == 0) return fail("cuptiRangeProfilerDecodeData (no range recorded for the launch)", CUPTI_ERROR_NOT_READY);
  const char* names[kProfileMetricCount];
  for (std::size_t i = 0; i < kProfileMetricCount; ++i) names[i] = kProfileMetrics[i];
  double values[kProfileMetricCount] = {};
  auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  eval.pHostObject = host_.host;
  eval.pCounterDataImage = counterData_.data();
  eval.counterDataImageSize = counterData_.size();
  eval.rangeIndex = 0;
  eval.ppMetricNames = names;
  eval.numMetrics = kProfileMetricCount;
  eval.pMetricValues = values;
  if (CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&eval); r != CUPTI_SUCCESS)
    return fail("cuptiProfilerHostEvaluateToGpuValues", r);
  out = MetricValues{values[0], values[1], values[2], values[3]};
  return true;
}

void RangeProfiler::teardown() {
  if (object_) {
    auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&p);
    object_ = nullptr;
    context_ = nullptr;
  }
  releaseHostConfig(host_);
  counterData_.clear();
  if (initialized_) {
    auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
    cuptiProfilerDeInitialize(&p);
    initialized_ = false;
  }
}

}  // namespace strata::cuda::collector
