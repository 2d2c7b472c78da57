// Mixed mode on a running Python program (attach by pid with "native": true).
//
// The Python layer is the pid attach (a read-only view from memory at once, then the agent
// brought in with no restart). Bringing the agent in stops the process with ptrace for a moment,
// which no other tracer may hold then, so the native debugger attaches once the agent is in.
// Native breakpoints the client sets before that are held, answered as pending, and sent then;
// the ids the client has stay the ones it got (nativeToClient_).
#include "backends/mixed/mixed_backend.hpp"

namespace strata::backends {

namespace {

const char* const kHeld = "waits for the native debugger, which attaches once the Python agent is in the process";

}  // namespace

void MixedBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  if (!spec.processId)
    return reply(Error{errors::kBadArguments, "mixed mode (\"native\": true) attaches by processId", true});
  if (!PidAttachBackend::wants(*spec.processId))
    return reply(Error{errors::kBadArguments,
                       "process " + std::to_string(*spec.processId) +
                           " does not run CPython: attach without \"native\": true to debug it as a native program",
                       true});
  agentDir_ = agentPythonPath(host_.adapterExecutable());
  attaching_ = true;
  nativeIn_ = false;
  pid_ = *spec.processId;
  auto pid = std::make_unique<PidAttachBackend>(io_, pythonHost());
  std::weak_ptr<bool> alive = alive_;
  pid->whenAgentIn([this, alive] {
    // Posted: the pid attach finishes its own work for the agent first.
    asio::post(io_, [this, alive] {
      if (!alive.expired()) attachNative();
    });
  });
  pyLaunch_ = nullptr;
  py_ = std::move(pid);
  py_->attach(spec, std::move(reply));
}

void MixedBackend::attachNative() {
  if (exited_) return;
  std::weak_ptr<bool> alive = alive_;
  AttachSpec native;
  native.processId = pid_;
  native_->attach(native, [this, alive](Result<void> r) {
    if (alive.expired()) return;
    if (!r) {
      host_.output(OutputCategory::Important,
                   "The native debugger could not attach (" + r.error().message + "): this session debugs Python only.\n");
      return;
    }
    // The native debugger holds the process stopped since its attach: let it run.
    native_->configurationDone([this, alive](Result<void> done) {
      if (alive.expired()) return;
      if (!done) {
        host_.output(OutputCategory::Important, "The native debugger could not resume the process: " + done.error().message + "\n");
        return;
      }
      nativeIn_ = true;
      auto sent = [this, alive](std::vector<std::int64_t> ids, std::optional<std::string> path) {
        return [this, alive, ids, path](Result<std::vector<BreakpointReport>> r) {
          if (alive.expired() || !r) return;
          for (std::size_t i = 0; i < r->size() && i < ids.size(); ++i) {
            BreakpointReport b = (*r)[i];
            if (b.id) nativeToClient_[*b.id] = ids[i];
            b.id = tag(ids[i], kNative);
            b.path = path;
            host_.breakpointChanged(b);
          }
        };
      };
      for (auto& [path, entry] : std::exchange(heldSources_, {}))
        native_->setSourceBreakpoints(path, entry.first, sent(entry.second, path));
      if (auto f = std::exchange(heldFunctions_, std::nullopt))
        native_->setFunctionBreakpoints(f->first, sent(f->second, std::nullopt));
      if (auto e = std::exchange(heldExceptions_, std::nullopt))
        native_->setExceptionBreakpoints(*e, [](Result<std::vector<BreakpointReport>>) {});
      host_.output(OutputCategory::Important, "The native debugger is in process " + std::to_string(pid_) +
                                                  " too: C/C++ breakpoints and merged stacks work now.\n");
    });
  });
}

std::vector<BreakpointReport> MixedBackend::held(std::size_t count) {
  std::vector<BreakpointReport> out(count);
  for (auto& b : out) {
    b.id = nextHeld_++;
    b.pending = true;
    b.message = kHeld;
  }
  return out;
}

std::vector<BreakpointReport> MixedBackend::notYetNative(std::size_t count) const {
  std::vector<BreakpointReport> out(count);
  for (auto& b : out)
    b.message = "not set: the native debugger is not in the process yet (it attaches once the Python agent is in); "
                "set it again then";
  return out;
}

std::int64_t MixedBackend::clientNativeId(std::int64_t nativeId) const {
  auto it = nativeToClient_.find(nativeId);
  return it == nativeToClient_.end() ? nativeId : it->second;
}

void MixedBackend::nativeSourceBreakpoints(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                                           Reply<std::vector<BreakpointReport>> reply) {
  if (nativeIn_) return native_->setSourceBreakpoints(path, breakpoints, std::move(reply));
  auto reports = held(breakpoints.size());
  std::vector<std::int64_t> ids;
  for (const auto& b : reports) ids.push_back(*b.id);
  if (breakpoints.empty()) heldSources_.erase(path);
  else heldSources_[path] = {breakpoints, ids};
  reply(std::move(reports));
}

void MixedBackend::nativeFunctionBreakpoints(const std::vector<FunctionBreakpointSpec>& breakpoints,
                                             Reply<std::vector<BreakpointReport>> reply) {
  if (nativeIn_) return native_->setFunctionBreakpoints(breakpoints, std::move(reply));
  auto reports = held(breakpoints.size());
  std::vector<std::int64_t> ids;
  for (const auto& b : reports) ids.push_back(*b.id);
  heldFunctions_.reset();
  if (!breakpoints.empty()) heldFunctions_ = std::make_pair(breakpoints, ids);
  reply(std::move(reports));
}

void MixedBackend::nativeExceptionBreakpoints(const std::vector<ExceptionFilterSpec>& filters,
                                              Reply<std::vector<BreakpointReport>> reply) {
  if (nativeIn_) return native_->setExceptionBreakpoints(filters, std::move(reply));
  heldExceptions_ = filters;
  std::vector<BreakpointReport> out(filters.size());
  for (auto& b : out) b.verified = true;  // a filter is on as soon as the native debugger is
  reply(std::move(out));
}

}  // namespace strata::backends
