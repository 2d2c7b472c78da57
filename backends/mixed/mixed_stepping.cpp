// Mixed mode's steps across the boundary between Python and C/C++.
//
// Python → C++: a stepIn at a Python stop arms the agent's step as usual and, for that thread,
// a breakpoint at the first line of every function of the program's own code (the native
// debugger's entry catch). Whichever comes first ends the step: the next Python line (the
// agent's stop) or the first line of an extension function (a native stop). A Python frame
// that own C/C++ code called (a callback) also gets a catch where it returns to that code, so
// stepping out of it (or off its end) stops in the C++ caller.
//
// C++ → Python: the agent's step stays armed while the thread runs C/C++ code, and the native
// debugger tells it, through a table in the agent's core module it writes with every thread
// stopped (strata_mixed_steps: no Python code needs to run for it, the thread in C++ holds the
// GIL), how to take it: armed (a stepOut or stepIn whose end may be a Python line), held (a
// `next` over a line that calls back into Python) or dropped (a continue). A native step that
// ends outside the program's own code (pybind11, the standard library, the interpreter) runs
// on with the entry catch armed again, so the step ends at the next Python line or own C/C++
// function: the Python caller after stepping out, the Python callback after stepping in. When
// the code it ended in was called by own code (a stepIn into std::function or std::sort), the
// catch also stops where that call returns, and the step goes on from there as a native
// debugger that steps over library code would.
//
// A C++ stop the thread reached without a Python step (a C++ breakpoint) has no Python step
// for the table to steer: when its step leaves own code, the native debugger asks for one
// (mode 3) and queues the core's strata_mixed_pending as a CPython pending call, which the
// interpreter runs at its next check of the eval breaker (as the C++ function returns to its
// Python caller, or as a Python callback starts); the agent arms a step to the thread's next
// Python line there. Without a pending-call table for the interpreter (or without the agent's
// C core), such a step stops where it left own code, as in a native session.
#include "backends/mixed/mixed_backend.hpp"

#include <algorithm>
#include <cstring>

#include "backends/python/attach/injector.hpp"

namespace strata::backends {

namespace {

constexpr const char* kStepTable = "strata_mixed_steps";
constexpr const char* kPendingHook = "strata_mixed_pending";
constexpr std::int64_t kArmed = 0, kHeld = 1, kDropped = 2, kAsked = 3;
constexpr std::uint64_t kStepSlots = 64, kSlotSize = 16;

bool startsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// No own function: a catch of a return address alone.
native::debugger::OwnCode nothingOwn() {
  return {[](const std::string&) { return false; }, [](const std::string&) { return false; }};
}

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

// The own C/C++ frame that called the Python frame a thread stopped in (the return address of
// its call into the interpreter), from the merged stack of its stop; 0: none shown, or Python
// called it.
std::uint64_t MixedBackend::ownCallerOfPython(std::int64_t tid) const {
  auto it = pyStacks_.find(tid);
  if (it == pyStacks_.end() || it->second.empty()) return 0;
  native::debugger::OwnCode own = ownCode();
  for (std::size_t i = 1; i < it->second.size(); ++i) {
    const FrameInfo& f = it->second[i];
    if (f.owner && f.owner != native_.get()) return 0;  // a Python frame (the agent's)
    if (f.instructionPointerReference.empty() || !f.source || !f.source->path || !own.module(f.moduleId) ||
        !own.file(*f.source->path))
      continue;
    return std::strtoull(f.instructionPointerReference.c_str(), nullptr, 16);
  }
  return 0;
}

void MixedBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  Layer layer = stopLayerOf(options.threadId);
  std::weak_ptr<bool> alive = alive_;
  std::int64_t tid = options.threadId;
  returnCatch_.reset();
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
    bool line = options.granularity != Granularity::Instruction;
    // A callback's step that returns to the C++ code that called it stops there.
    std::uint64_t back = line ? ownCallerOfPython(tid) : 0;
    bool into = kind == StepKind::In && line;
    if (!into && !back) return py_->step(kind, options, answeredAtNativeStop<void>(done, Result<void>()));
    // Into C/C++ too: the catch first (the thread is parked, so it cannot be missed).
    return native_->catchEntry(tid, into ? ownCode() : nothingOwn(), back, 0,
                               [this, alive, kind, options, done](Result<std::size_t> caught) {
                                 if (alive.expired()) return;
                                 entryCatchArmed_ = caught && *caught > 0;
                                 py_->step(kind, options, answeredAtNativeStop<void>(done, Result<void>()));
                               });
  }
  lastNativeStep_ = {kind, options};
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

// A C/C++ stop no Python step led to: a Python step for thread `tid` asked of the agent (its
// slot says asked; the pending call arms it when the interpreter runs it). then(false): the
// agent could not be asked (no C core, no pending-call table for this CPython, a busy queue).
void MixedBackend::armFromNative(std::int64_t tid, std::function<void(bool)> then) {
  std::weak_ptr<bool> alive = alive_;
  auto queue = [this, alive, tid, then]() {
    if (alive.expired()) return;
    if (!pendingHook_ || !remote_) return then(false);
    auto state = pythonState();
    std::uint64_t threadState = 0;
    if (state)
      for (const auto& t : (*state)->threads)
        if (t.tid == tid) threadState = t.threadState;
    pyState_.reset();  // read at this stop, which the client never sees
    if (!threadState) return then(false);
    setStepModes({{tid, kAsked}}, [this, alive, tid, threadState, then](Result<void> asked) {
      if (alive.expired()) return;
      if (!asked) return then(false);
      auto queued = python::attach::queuePendingCall(*remote_, pendingHook_, static_cast<std::uint64_t>(tid), threadState);
      if (!queued || !*queued) {
        if (!queued)
          host_.output(OutputCategory::Console, "Stepping from C/C++ into Python is not possible here: " +
                                                    queued.error().message + "\n");
        return setStepModes({{tid, kDropped}}, [then](Result<void>) { then(false); });
      }
      then(true);
    });
  };
  if (pendingHook_) return queue();
  native_->symbolAddress(kPendingHook, "_strata_core", [this, alive, queue](Result<std::uint64_t> at) {
    if (alive.expired()) return;
    if (at) pendingHook_ = *at;
    queue();
  });
}

// A native step that ended outside own code runs on, to the next Python line or own function
// (and, from library code own code called, to where that call returns); a return there goes on
// with the step the user asked. False: the stop is the user's.
bool MixedBackend::stepRunsOn(const StopReport& stop) {
  if (stop.reason != "step" || !stop.threadId) return false;
  std::int64_t tid = *stop.threadId;
  std::weak_ptr<bool> alive = alive_;
  native_->ownPlace(tid, ownCode(), [this, alive, stop, tid](Result<native::debugger::OwnPlace> place) {
    if (alive.expired()) return;
    auto back = std::exchange(returnCatch_, std::nullopt);
    if (!place) return reportStop(kNative, stop);
    if (back && back->tid == tid && back->pc == place->pc && lastNativeStep_ && lastNativeStep_->second.threadId == tid) {
      // Back in own code, in the middle of the line the step started on: it goes on.
      ++quietContinues_;
      return native_->step(lastNativeStep_->first, lastNativeStep_->second, [this, alive, stop](Result<void> r) {
        if (alive.expired() || r) return;
        --quietContinues_;
        reportStop(kNative, stop);
      });
    }
    if (place->own) return reportStop(kNative, stop);
    auto runOn = [this, alive, stop, tid, place = *place](bool pythonArmed) {
      if (alive.expired()) return;
      // Nothing but an own function's entry could end it: the user's stop is here.
      if (!pythonArmed && !place.ownReturn) return reportStop(kNative, stop);
      native_->catchEntry(tid, ownCode(), place.ownReturn, place.ownReturnSp,
                          [this, alive, stop, tid, place](Result<std::size_t> caught) {
        if (alive.expired()) return;
        if (!caught) return reportStop(kNative, stop);
        entryCatchArmed_ = *caught > 0;
        if (place.ownReturn) returnCatch_ = ReturnCatch{tid, place.ownReturn};
        ++quietContinues_;
        native_->resume(tid, false, [this, alive, stop](Result<bool> r) {
          if (alive.expired()) return;
          if (r) return;
          --quietContinues_;
          reportStop(kNative, stop);
        });
      });
    };
    if (pyStepArmed_.count(tid))
      return setStepModes({{tid, kArmed}}, [runOn](Result<void> armed) { runOn(armed.ok()); });
    armFromNative(tid, [this, alive, tid, runOn](bool armed) {
      if (alive.expired()) return;
      if (armed) pyStepArmed_.insert(tid);
      runOn(armed);
    });
  });
  return true;
}

}  // namespace strata::backends
