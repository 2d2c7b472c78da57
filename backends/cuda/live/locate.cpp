// Where the collector's files are, whether this machine can run CUDA at all, and the text late
// mode hands to the target.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "strata/cuda/live/gpu_collection.hpp"

#ifndef STRATA_CUPTI_COLLECTOR
#define STRATA_CUPTI_COLLECTOR ""
#endif
#ifndef STRATA_CUPTI_LIBRARY
#define STRATA_CUPTI_LIBRARY ""
#endif

namespace strata::cuda {

namespace fs = std::filesystem;

namespace {
constexpr const char* kCollectorName = "libstrata_cupti.so";
constexpr const char* kCuptiName = "libcupti.so.13";

bool readable(const fs::path& p) { return !p.empty() && access(p.c_str(), R_OK) == 0; }

std::string selfExecutable() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}
}  // namespace

Result<GpuMode> parseGpuMode(std::string_view text) {
  if (text == "off") return GpuMode::Off;
  if (text == "trace") return GpuMode::Trace;
  if (text == "stacks") return GpuMode::Stacks;
  return Error{errors::kGpuSetting, "GPU mode '" + std::string(text) + "': expected off, trace or stacks", true};
}

std::string_view gpuModeName(GpuMode mode) {
  switch (mode) {
    case GpuMode::Off: return "off";
    case GpuMode::Trace: return "trace";
    case GpuMode::Stacks: return "stacks";
  }
  return "trace";
}

CollectorFiles locateCollector(const std::string& executable) {
  CollectorFiles f;
  auto tryCollector = [&](const fs::path& p) {
    if (p.empty() || !f.collector.empty()) return;
    f.searched.push_back(p.string());
    if (readable(p)) f.collector = p.string();
  };
  if (const char* env = std::getenv("STRATA_GPU_COLLECTOR"); env && *env) tryCollector(env);
  const fs::path exe = executable.empty() ? fs::path(selfExecutable()) : fs::path(executable);
  if (!exe.empty()) {
    tryCollector(exe.parent_path() / kCollectorName);
    tryCollector(exe.parent_path().parent_path() / "lib" / "strata" / kCollectorName);
  }
  tryCollector(STRATA_CUPTI_COLLECTOR);
  if (!f.collector.empty()) f.cupti = collectorAt(f.collector).cupti;
  return f;
}

CollectorFiles collectorAt(const std::string& collector) {
  CollectorFiles f;
  f.searched = {collector};
  if (!readable(collector)) return f;
  f.collector = collector;
  fs::path beside = fs::path(collector).parent_path() / kCuptiName;
  if (readable(beside)) f.cupti = beside.string();
  else if (readable(STRATA_CUPTI_LIBRARY)) f.cupti = STRATA_CUPTI_LIBRARY;
  return f;
}

std::string machineGpuProblem() {
  std::error_code ec;
  // The NVIDIA kernel module shows itself here (containers see the host's); WSL2 has /dev/dxg.
  if (fs::exists("/proc/driver/nvidia/version", ec) || fs::exists("/dev/dxg", ec)) return {};
  return "this machine has no NVIDIA driver loaded (/proc/driver/nvidia/version does not exist), so no program "
         "can use a GPU here";
}

boost::json::object LateStart::agentArguments() const {
  return boost::json::object{{"collector", collector}, {"config", config}};
}

std::string LateStart::pythonStart() const {
  // JSON string literals are valid Python string literals for these paths and words.
  return "import ctypes as _c; _strata_gpu = _c.CDLL(" + boost::json::serialize(boost::json::string(collector)) +
         "); _strata_gpu_result = _strata_gpu.strata_gpu_start(" +
         boost::json::serialize(boost::json::string(config)) + ".encode())";
}

std::string LateStart::pythonStop(const std::string& collector) {
  return "import ctypes as _c; _strata_gpu_result = _c.CDLL(" + boost::json::serialize(boost::json::string(collector)) +
         ").strata_gpu_stop()";
}

}  // namespace strata::cuda
