// The backend factory of strata-dap: which of the shipped backends serves a launch or attach.
#include "adapter/builtin_backends.hpp"

#include "backends/native/backend/native_backend.hpp"
#include "backends/process/process_backend.hpp"
#include "backends/python/proxy/python_backend.hpp"

namespace strata::adapter {

BackendFactory builtinBackends() {
  BackendFactory f;
  f.launch = [](Session& s, const backends::LaunchSpec& spec) -> std::unique_ptr<backends::Backend> {
    if (spec.language == backends::LaunchSpec::Language::Python && !spec.noDebug)
      return std::make_unique<backends::PythonBackend>(s.io(), s);
    if (spec.language == backends::LaunchSpec::Language::Native && !spec.noDebug)
      return std::make_unique<backends::NativeBackend>(s.io(), s);
    return std::make_unique<backends::ProcessBackend>(s.io(), s);
  };
  f.attach = [](Session& s, const backends::AttachSpec& spec) -> std::unique_ptr<backends::Backend> {
    if (spec.processId) return std::make_unique<backends::NativeBackend>(s.io(), s);
    return std::make_unique<backends::PythonBackend>(s.io(), s);
  };
  f.debuggers = {backends::PythonBackend::staticFeatures(), backends::NativeBackend::staticFeatures()};
  return f;
}

}  // namespace strata::adapter
