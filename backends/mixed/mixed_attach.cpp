// Mixed mode on a running Python program (attach by pid with "native": true).
//
// The Python layer is the pid attach (a read-only view from memory at once, then the agent
// brought in with no restart). Bringing the agent in stops the process with ptrace for a moment,
// which no other tracer may hold then, so the native debugger attaches once the agent is in.
// Native breakpoints the client sets before that are kept in a breakpoint book, answered as
// pending, and sent then; the ids the client has stay the ones it got (breakpointPlaced).
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
  host_.partGone(*py_);
  py_ = std::move(pid);
  host_.partAdded(*py_);
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
      // What the client set meanwhile: placed now under the ids it has.
      heldNative_.replay(*native_, [this, alive](const BreakpointBook::SetPtr& set, Result<std::vector<BreakpointReport>> r) {
        if (alive.expired() || !r || set->kind == BreakpointSet::Kind::Exception) return;
        for (std::size_t i = 0; i < r->size() && i < set->ids.size(); ++i) {
          BreakpointReport b = (*r)[i];
          b.owner = native_.get();
          host_.breakpointPlaced(nullptr, set->ids[i], b);
        }
      });
      heldNative_.clear();
      host_.output(OutputCategory::Important, "The native debugger is in process " + std::to_string(pid_) +
                                                  " too: C/C++ breakpoints and merged stacks work now.\n");
    });
  });
}

std::vector<BreakpointReport> MixedBackend::notYetNative(std::size_t count) const {
  std::vector<BreakpointReport> out(count);
  for (auto& b : out)
    b.message = "not set: the native debugger is not in the process yet (it attaches once the Python agent is in); "
                "set it again then";
  return out;
}

// Native breakpoints before the native debugger is in: kept (one set per source, one of
// functions, one of exception filters) and answered as pending under ids of ours.
void MixedBackend::nativeBreakpoints(BreakpointSet set, Reply<std::vector<BreakpointReport>> reply) {
  if (nativeIn_) return BreakpointBook::send(*native_, set, ownedBy(native_.get(), std::move(reply)));
  auto kept = heldNative_.keep(std::move(set));
  reply(BreakpointBook::held(*kept, kHeld));
}

void MixedBackend::attachAfterCrash(const CrashReport& crash, std::function<void()> release) {
  agentDir_ = agentPythonPath(host_.adapterExecutable());
  attaching_ = true;  // the process is known to the session already: no second process event
  nativeIn_ = false;
  pid_ = crash.pid;
  std::weak_ptr<bool> alive = alive_;
  AttachSpec native;
  native.processId = pid_;
  native.coreOnCrash = crash.coreOnCrash;
  native_->attach(native, [this, alive, release, crash](Result<void> r) {
    if (alive.expired()) return release();
    if (!r) {
      host_.output(OutputCategory::Important, "The native debugger could not attach to process " + std::to_string(pid_) +
                                                  " (" + r.error().message + "): it ends with " + signalName(crash.signal) + ".\n");
      release();
      // Its signal, under the disposition it had, ends it (what the session would have seen).
      return onExited(ExitStatus{128 + crash.signal, crash.signal});
    }
    // Every thread runs again; the crashed one waits in the guard until it is released, and
    // its signal then comes to the native debugger.
    native_->configurationDone([this, alive, release](Result<void> done) {
      if (alive.expired()) return release();
      if (done) nativeIn_ = true;
      release();
    });
  });
}

}  // namespace strata::backends
