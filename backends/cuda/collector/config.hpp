// The collector's settings: from the environment the adapter sets (launch mode, inherited by
// children) or from the text given to strata_gpu_start (late mode).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "strata/cuda/collector/ring_format.hpp"
#include "strata/result.hpp"

namespace strata::cuda::collector {

struct Config {
  ring::Mode mode = ring::Mode::Trace;
  std::string dir = "/tmp";          // where the ring file goes
  std::string session;               // written into the ring; the reader checks it
  std::size_t ringBytes = 32u << 20;
  std::size_t bufferBytes = 4u << 20;      // one CUPTI activity buffer
  std::size_t bufferTotalBytes = 128u << 20;  // all buffers CUPTI may hold at once
  unsigned flushPeriodMs = 100;
  // Sticky CUDA errors: watched at the exit of the calls where programs see them (synchronizing
  // calls, copies, queries, cudaGetLastError: `Sync`, the default), of every call (`All`: a launch
  // that fails on an earlier error stops there too, at a callback on every CUDA call), or not.
  enum class Errors { Off, Sync, All } errors = Errors::Sync;
  // CPU-side API records (the timeline's thread rows, gpuKernel's `launch`): none (the
  // default: what a launch costs stays near what CUPTI's kernel tracing alone costs), the
  // launch, copy, set, synchronize and allocation calls (`Launches`), or every call but the
  // chatty queries (`All`).
  enum class Api { Off, Launches, All } api = Api::Off;
  bool graphWhole = false;   // GRAPH_TRACE: one record per graph launch instead of per node
  // Measure hardware metrics of the next profileCount launches of kernels whose names contain
  // profileKernel (0: no request at start; a reader can still ask through the ring).
  std::string profileKernel;
  unsigned profileCount = 0;
};

// "NAME" or "NAME:N" (N 1..64, default 1; NAME may hold '::', only a last ':' followed by
// digits is the count): a profile request's kernel name part and launch count.
Result<void> parseProfileRequest(std::string_view text, std::string_view shown, std::string& kernel, unsigned& count);

// The variables, each optional:
//   STRATA_GPU_MODE     off | trace | stacks         (trace)
//   STRATA_GPU_DIR      directory for the ring        (/tmp)
//   STRATA_GPU_SESSION  token the reader matches
//   STRATA_GPU_RING_MB  ring size in MiB, 1..1024     (32)
//   STRATA_GPU_BUFFER_MB  CUPTI buffer memory in MiB, 8..4096 (128, in 4 MiB buffers)
//   STRATA_GPU_FLUSH_MS   flush period, 10..10000     (100)
//   STRATA_GPU_ERRORS   1 (or sync) | all | 0: stop on sticky CUDA errors (1)
//   STRATA_GPU_API      off | launches | all: CPU-side API records (off)
//   STRATA_GPU_GRAPHS   nodes | whole                 (nodes)
//   STRATA_GPU_PROFILE  NAME[:N]: hardware metrics of the next N (1..64) launches of kernels
//                       whose names contain NAME      (none)
Result<Config> configFromEnvironment(const std::function<const char*(const char*)>& getenv);

// The same keys in lower case without the prefix, as "key=value" words separated by spaces or
// semicolons ("mode=stacks dir=/run/x session=abc"), applied over `base`.
Result<Config> parseConfig(std::string_view text, Config base);

}  // namespace strata::cuda::collector
