// The backend factory of strata-dap: which of the shipped backends serves a launch or attach,
// and the GPU backend every session holds beside it.
#include "adapter/builtin_backends.hpp"

#include "backends/core/core_backend.hpp"
#include "backends/cuda/service/gpu_backend.hpp"
#include "backends/cuda/service/live_collection.hpp"
#include "backends/mixed/mixed_backend.hpp"
#include "backends/native/backend/native_backend.hpp"
#include "backends/process/process_backend.hpp"
#include "backends/python/attach/pid_attach_backend.hpp"
#include "backends/python/proxy/python_backend.hpp"
#include "backends/ranks/ranks_backend.hpp"
#include "strata/stacks/stacks.hpp"

namespace strata::adapter {

BackendFactory builtinBackends() {
  BackendFactory f;
  f.parallelStacks = [](std::vector<int> pids, bool children, bool pythonOnly,
                        const std::function<bool()>& cancelled) -> Result<json::value> {
    auto tree = stacks::parallelStacks(std::vector<pid_t>(pids.begin(), pids.end()), children, pythonOnly, cancelled);
    if (!tree) return tree.takeError();
    return json::value(std::move(tree->json));
  };
  f.launch = [](Session& s, backends::BackendHost& host,
                const backends::LaunchSpec& spec) -> std::unique_ptr<backends::Backend> {
    if (!spec.coreFile.empty()) return std::make_unique<backends::CoreBackend>(s.io(), host);
    if (spec.ranks) return std::make_unique<backends::RanksBackend>(s.io(), host);
    if (spec.language == backends::LaunchSpec::Language::Python && !spec.noDebug && spec.native)
      return std::make_unique<backends::MixedBackend>(s.io(), host);
    if (spec.language == backends::LaunchSpec::Language::Python && !spec.noDebug)
      return std::make_unique<backends::PythonBackend>(s.io(), host);
    if (spec.language == backends::LaunchSpec::Language::Native && !spec.noDebug)
      return std::make_unique<backends::NativeBackend>(s.io(), host);
    return std::make_unique<backends::ProcessBackend>(s.io(), host);
  };
  f.attach = [](Session& s, backends::BackendHost& host,
                const backends::AttachSpec& spec) -> std::unique_ptr<backends::Backend> {
    // A pid running CPython gets the Python attach (read-only from memory, then the agent);
    // any other process the native debugger, exactly as before.
    if (!spec.processIds.empty() || spec.processTree || !spec.nodes.empty())
      return std::make_unique<backends::RanksBackend>(s.io(), host);
    if (spec.processId && spec.native) return std::make_unique<backends::MixedBackend>(s.io(), host);
    if (spec.processId && backends::PidAttachBackend::wants(*spec.processId))
      return std::make_unique<backends::PidAttachBackend>(s.io(), host);
    if (spec.processId) return std::make_unique<backends::NativeBackend>(s.io(), host);
    return std::make_unique<backends::PythonBackend>(s.io(), host);
  };
  f.gpu = [](Session& s, backends::BackendHost& host) -> std::unique_ptr<backends::Backend> {
    auto gpu = std::make_unique<backends::GpuBackend>(s.io(), host);
    // Live collection follows whichever debugger runs the session's program (late start and
    // stop go through it); the session outlives both.
    gpu->attachCollection(std::make_shared<backends::LiveGpuCollection>(
        s.io(), *gpu, [&s] { return s.backend(); }, s.adapterExecutable()));
    return gpu;
  };
  f.postMortem = [](Session& s, backends::BackendHost& host, const backends::CrashReport& crash,
                    std::function<void()> release) -> std::unique_ptr<backends::Backend> {
    auto mixed = std::make_unique<backends::MixedBackend>(s.io(), host);
    mixed->attachAfterCrash(crash, std::move(release));
    return mixed;
  };
  f.debuggers = {backends::PythonBackend::staticFeatures(), backends::NativeBackend::staticFeatures()};
  f.services = {backends::GpuBackend::staticFeatures()};
  return f;
}

}  // namespace strata::adapter
