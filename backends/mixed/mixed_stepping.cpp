// Mixed mode's steps across the boundary between Python and C/C++.
//
// Python → C++: a stepIn at a Python stop arms the agent's step as usual and, for that thread,
// a breakpoint at the first line of every function of the program's own C/C++ code (the native
// debugger's entry catch). Whichever comes first ends the step: the next Python line (the
// agent's stop) or the first line of an extension function (a native stop).
//
// C++ → Python: the agent's step stays armed while the thread runs C/C++ code, and the native
// debugger tells it, through a table in the agent's core module it writes with every thread
// stopped (strata_mixed_steps: no Python code needs to run for it, the thread in C++ holds the
// GIL), how to take it: armed (a stepOut or stepIn whose end may be a Python line), held (a
// `next` over a line that calls back into Python) or dropped (a continue). A native step that
// ends outside the program's own code (pybind11, the standard library, the interpreter) runs
// on with the entry catch armed again, so the step ends at the next Python line or own C/C++
// function: the Python caller after stepping out, the Python callback after stepping in.
//
// A C++ stop the thread reached without a Python step (a C++ breakpoint) has no Python step
// armed: its steps stay in C/C++, as in a native session.
#include "backends/mixed/mixed_backend.hpp"

#include <algorithm>
#include <cstring>

namespace strata::backends {

namespace {

constexpr const char* kStepTable = "strata_mixed_steps";
constexpr std::int64_t kArmed = 0, kHeld = 1, kDropped = 2;
constexpr std::uint64_t kStepSlots = 64, kSlotSize = 16;

bool startsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

// The program's own code: what a step into C/C++ stops in. Not the interpreter, its standard
// extension modules, the agent or the system's libraries; not headers of the system, of
// CPython, of pybind11 or of installed packages (torch/include), even compiled into the
// program's own extension.
native::debugger::OwnCode MixedBackend::ownCode() const {
  native::debugger::OwnCode own;
  own.module = [agentDir = agentDir_, interpreter = interpreter_](const std::string& path) {
    std::string base = path.substr(path.rfind('/') + 1);
    if (path == interpreter || startsWith(base, "libpython") || startsWith(base, "ld-linux")) return false;
    if (!agentDir.empty() && startsWith(path, agentDir + "/")) return false;
    for (std::string_view system : {"/usr/lib/", "/lib/", "/lib64/", "/usr/lib64/"})
      if (startsWith(path, system)) return false;
    return !contains(path, "/lib-dynload/");
  };
  own.file = [](const std::string& file) {
    if (file.empty() || file[0] != '/' || startsWith(file, "/usr/")) return false;
    for (std::string_view outside : {"/pybind11/", "/include/python3", "/site-packages/", "/dist-packages/"})
      if (contains(file, outside)) return false;
    return true;
  };
  return own;
}

void MixedBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  Layer layer = stopLayerOf(options.threadId);
  std::weak_ptr<bool> alive = alive_;
  std::int64_t tid = options.threadId;
  auto done = [this, alive, layer, tid, reply](Result<void> r) {
    if (alive.expired()) return;
    if (r) {
      if (layer == kNative) forgetNativeStop();
      else pythonStops_.erase(tid), pyStepArmed_.insert(tid);
      pyStacks_.clear();
    }
    reply(std::move(r));
  };
  if (layer == kPython) {
    if (kind != StepKind::In || options.granularity == Granularity::Instruction)
      return py_->step(kind, options, answeredAtNativeStop<void>(done, Result<void>()));
    // Into C/C++ too: the catch first (the thread is parked, so it cannot be missed).
    return native_->catchEntry(tid, ownCode(), [this, alive, kind, options, done](Result<std::size_t> caught) {
      if (alive.expired()) return;
      entryCatchArmed_ = caught && *caught > 0;
      py_->step(kind, options, answeredAtNativeStop<void>(done, Result<void>()));
    });
  }
  if (!pyStepArmed_.count(tid)) return native_->step(kind, options, done);
  // The Python step stays armed: held over a C++ `next`, so a callback it runs does not end it.
  setStepModes({{tid, kind == StepKind::Over ? kHeld : kArmed}}, [this, alive, kind, options, done](Result<void>) {
    if (alive.expired()) return;
    native_->step(kind, options, done);
  });
}

// At a native stop: a continue drops every Python step still armed.
void MixedBackend::dropArmedSteps(std::function<void()> then) {
  std::vector<std::pair<std::int64_t, std::int64_t>> modes;
  for (std::int64_t tid : pyStepArmed_) modes.emplace_back(tid, kDropped);
  pyStepArmed_.clear();
  if (modes.empty()) return then();
  setStepModes(std::move(modes), [then = std::move(then)](Result<void>) { then(); });
}

void MixedBackend::setStepModes(std::vector<std::pair<std::int64_t, std::int64_t>> modes, Reply<void> reply) {
  std::weak_ptr<bool> alive = alive_;
  auto write = [this, alive, modes, reply]() {
    if (alive.expired()) return;
    if (!stepTable_) return reply(Error{errors::kInternal, "the agent's step table is not in the process", false});
    auto left = std::make_shared<std::size_t>(modes.size());
    auto failed = std::make_shared<std::optional<Error>>();
    for (const auto& [tid, mode] : modes) {
      std::vector<std::uint8_t> bytes(kSlotSize);
      std::memcpy(bytes.data(), &tid, 8);
      std::memcpy(bytes.data() + 8, &mode, 8);
      std::uint64_t at = stepTable_ + (static_cast<std::uint64_t>(tid) % kStepSlots) * kSlotSize;
      native_->writeAddress(at, std::move(bytes), [left, failed, reply](Result<void> r) {
        if (!r && !*failed) *failed = r.error();
        if (--*left == 0) reply(*failed ? Result<void>(**failed) : Result<void>());
      });
    }
  };
  if (stepTable_) return write();
  native_->symbolAddress(kStepTable, "_strata_core", [this, alive, write](Result<std::uint64_t> at) {
    if (alive.expired()) return;
    if (at) stepTable_ = *at;
    write();
  });
}

// A native stop on a thread with a Python step armed: a step that ended outside own code runs
// on, to the next Python line or own function. False: the stop is the user's.
bool MixedBackend::stepRunsOn(const StopReport& stop) {
  if (stop.reason != "step" || !stop.threadId || !pyStepArmed_.count(*stop.threadId)) return false;
  std::int64_t tid = *stop.threadId;
  std::weak_ptr<bool> alive = alive_;
  native_->inOwnCode(tid, ownCode(), [this, alive, stop, tid](Result<bool> own) {
    if (alive.expired()) return;
    if (!own || *own) return reportStop(kNative, stop);
    setStepModes({{tid, kArmed}}, [this, alive, stop, tid](Result<void> armed) {
      if (alive.expired()) return;
      if (!armed) return reportStop(kNative, stop);
      native_->catchEntry(tid, ownCode(), [this, alive, stop](Result<std::size_t> caught) {
        if (alive.expired()) return;
        entryCatchArmed_ = caught && *caught > 0;
        ++quietContinues_;
        native_->resume(*stop.threadId, false, [this, alive, stop](Result<bool> r) {
          if (alive.expired()) return;
          if (r) return;
          --quietContinues_;
          reportStop(kNative, stop);
        });
      });
    });
  });
  return true;
}

}  // namespace strata::backends
