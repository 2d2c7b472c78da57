// Mixed mode (mixed_backend.hpp): the native debugger starts the interpreter with the agent's
// command line and keeps tracing it; the agent dials back as in a plain Python launch. Requests
// go to the layer that owns their id or file; at a native stop, when the agent is frozen with
// the rest of the program, Python frames are read from the process's memory.
#include "backends/mixed/mixed_backend.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <utility>

namespace strata::backends {

namespace pr = python::remote;

// What each layer's backend reports, passed to the session through us; the ids inside are the
// layer's backend's (its own owner).
class MixedBackend::Side final : public ForwardingHost {
 public:
  Side(MixedBackend& mixed, Layer layer) : ForwardingHost(mixed.host_), m_(mixed), layer_(layer) {}
  void processStarted(const std::string& name, std::int64_t pid, bool launched) override {
    // An attach: the Python side (the pid attach) comes first and names the process.
    if ((layer_ == kNative) == m_.attaching_) return;
    m_.pid_ = pid;
    m_.host_.processStarted(name, pid, launched);
  }
  void exited(const ExitStatus& status) override {
    // The native debugger sees the process end; the agent's link closing says nothing more.
    if (layer_ == kNative || !m_.nativeIn_) m_.onExited(status);
  }
  bool canRunInTerminal() const override { return false; }
  void runInTerminal(const TerminalLaunch&, Reply<TerminalProcess> reply) override {
    reply(Error{errors::kUnsupportedRequest, "mixed mode runs the program under the native debugger", false});
  }
  bool canStartDebugging() const override { return false; }
  // The native debugger stops at a crash itself.
  bool takesCrashes() const override { return false; }
  void crashed(const CrashReport&, std::function<void()> release) override { release(); }
  void stopped(const StopReport& stop) override { m_.onStopped(layer_, stop); }
  void continued(std::int64_t threadId, bool allThreads) override { m_.onContinued(layer_, threadId, allThreads); }
  void threadChanged(std::int64_t threadId, bool started) override {
    // Every OS thread is the native debugger's to report; the agent knows the Python ones only.
    if (layer_ == kNative) m_.host_.threadChanged(threadId, started);
  }
  void breakpointChanged(const BreakpointReport& state) override {
    BreakpointReport b = state;
    ownedBy(&m_.owner(layer_), b);
    m_.host_.breakpointChanged(b);
  }
  void breakpointPlaced(Owner heldOwner, std::int64_t heldId, const BreakpointReport& placed) override {
    BreakpointReport b = placed;
    ownedBy(&m_.owner(layer_), b);
    m_.host_.breakpointPlaced(heldOwner ? heldOwner : &m_.owner(layer_), heldId, b);
  }

 private:
  MixedBackend& m_;
  Layer layer_;
};

namespace {

bool pythonSource(const std::string& path) {
  auto ends = [&](const char* s) {
    std::string_view e(s);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".py") || ends(".pyw");
}

// A name a Python function breakpoint can have (module.qualname), not a C++ one.
bool pythonishName(const std::string& name) {
  if (name.empty() || name.find("::") != std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
}

bool isElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}

// The interpreter's own executable when the launch names a wrapper (a pyenv shim, a shell
// script): the native debugger must start the ELF file itself. sys.executable keeps a
// virtual environment's path, which is what makes it that environment.
std::string realInterpreter(const LaunchSpec& child) {
  const std::string& named = child.argv.front();
  if (isElf(named)) return named;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return named;
  std::vector<std::string> args{named, "-c", "import sys; sys.stdout.write(sys.executable)"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child.environment;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  if (!child.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, child.cwd.c_str());
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, named.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  std::string found;
  if (rc == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) found.append(buf, static_cast<std::size_t>(n));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(out[0]);
  return !found.empty() && isElf(found) ? found : named;
}

const char* const kMemoryOnly =
    "this Python frame was read from memory at a native stop: evaluating needs the Python program to run "
    "(continue, or stop at a Python breakpoint for the full debugger)";

}  // namespace

MixedBackend::MixedBackend(asio::io_context& io, BackendHost& host)
    : io_(io),
      host_(host),
      pySide_(std::make_unique<Side>(*this, kPython)),
      nativeSide_(std::make_unique<Side>(*this, kNative)),
      native_(makeNativeLayer(io, *nativeSide_)) {
  auto launcher = std::make_unique<PythonBackend>(io, *pySide_);
  pyLaunch_ = launcher.get();
  py_ = std::move(launcher);
  // Frames, variables, sources and breakpoints of each layer are its backend's: the session
  // sends what names them there.
  host_.partAdded(*py_);
  host_.partAdded(*native_);
}

MixedBackend::~MixedBackend() = default;

BackendFeatures MixedBackend::staticFeatures() {
  BackendFeatures p = PythonBackend::staticFeatures(), n = nativeFeatures(), f = n;
  f.conditionalBreakpoints |= p.conditionalBreakpoints;
  f.hitConditionalBreakpoints |= p.hitConditionalBreakpoints;
  f.logPoints |= p.logPoints;
  f.functionBreakpoints |= p.functionBreakpoints;
  f.evaluateForHovers |= p.evaluateForHovers;
  f.setVariable |= p.setVariable;
  f.setExpression |= p.setExpression;
  f.completions |= p.completions;
  f.exceptionInfo |= p.exceptionInfo;
  f.clipboardContext |= p.clipboardContext;
  f.gpuTimeline |= p.gpuTimeline;
  f.exceptionFilters = p.exceptionFilters;
  for (const auto& e : n.exceptionFilters)
    if (std::none_of(f.exceptionFilters.begin(), f.exceptionFilters.end(), [&](const auto& x) { return x.filter == e.filter; }))
      f.exceptionFilters.push_back(e);
  return f;
}

BackendFeatures MixedBackend::features() const { return staticFeatures(); }

BackendHost& MixedBackend::pythonHost() { return *pySide_; }

Backend& MixedBackend::owner(Layer layer) {
  if (layer == kPython) return *py_;
  return *native_;
}

// ---- starting ----

void MixedBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  agentDir_ = agentPythonPath(host_.adapterExecutable());
  if (spec.console != Console::Internal)
    host_.output(OutputCategory::Console,
                 "In mixed mode the program runs under the native debugger, with its output in the Debug Console.\n");
  std::weak_ptr<bool> alive = alive_;
  pyLaunch_->launchWith(spec, [this, alive](const LaunchSpec& child, Reply<void> started) {
    LaunchSpec c = child;
    c.argv.front() = realInterpreter(child);
    interpreter_ = c.argv.front();
    c.console = Console::Internal;
    c.stopOnEntry = false;  // the agent holds the program before its first line, as always
    c.language = LaunchSpec::Language::Native;
    native_->launch(c, [this, alive, started](Result<void> r) {
      if (alive.expired()) return;
      if (!r) return started(std::move(r));
      // The interpreter runs up to the agent, which waits for the configuration.
      native_->configurationDone([started](Result<void> r2) { started(std::move(r2)); });
    });
  }, std::move(reply));
}

void MixedBackend::configurationDone(Reply<void> reply) { py_->configurationDone(std::move(reply)); }

void MixedBackend::abandonStart() {
  py_->abandonStart();
  native_->terminate(true, [](Result<void>) {});
}

// ---- breakpoints: .py files and Python names to the agent, the rest to the native debugger ----

void MixedBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  switch (set.kind) {
    case BreakpointSet::Kind::Source:
      if (!pythonSource(set.path)) return nativeBreakpoints(set, std::move(reply));
      return py_->setBreakpoints(set, ownedBy(py_.get(), std::move(reply)));
    case BreakpointSet::Kind::Function: return functionBreakpoints(set.functions, std::move(reply));
    case BreakpointSet::Kind::Exception: return exceptionFilters(set.filters, std::move(reply));
  }
}

void MixedBackend::functionBreakpoints(const std::vector<FunctionBreakpointSpec>& breakpoints,
                                       Reply<std::vector<BreakpointReport>> reply) {
  // A dotted or plain name may be either layer's: both are asked, the one that finds it wins.
  std::vector<FunctionBreakpointSpec> forPython;
  std::vector<std::size_t> pythonIndex;
  for (std::size_t i = 0; i < breakpoints.size(); ++i)
    if (pythonishName(breakpoints[i].name)) {
      forPython.push_back(breakpoints[i]);
      pythonIndex.push_back(i);
    }
  std::weak_ptr<bool> alive = alive_;
  nativeBreakpoints(BreakpointSet::function(breakpoints), [this, alive, reply, forPython, pythonIndex](Result<std::vector<BreakpointReport>> nr) {
    if (alive.expired()) return;
    if (!nr) return reply(nr.takeError());
    auto nativeReports = std::move(*nr);
    py_->setBreakpoints(BreakpointSet::function(forPython), [this, alive, reply, nativeReports, pythonIndex](Result<std::vector<BreakpointReport>> pr) mutable {
      if (alive.expired()) return;
      if (!pr) return reply(nativeReports);
      auto pyReports = std::move(*pr);
      ownedBy(py_.get(), pyReports);
      for (std::size_t k = 0; k < pyReports.size() && k < pythonIndex.size(); ++k) {
        auto& n = nativeReports[pythonIndex[k]];
        const auto& p = pyReports[k];
        if (p.verified && !n.verified) n = p;
        else if (!p.verified && !n.verified && !n.pending) n.message = p.message + "; " + n.message;
      }
      reply(std::move(nativeReports));
    });
  });
}

void MixedBackend::exceptionFilters(const std::vector<ExceptionFilterSpec>& filters,
                                    Reply<std::vector<BreakpointReport>> reply) {
  auto pyFilters = PythonBackend::staticFeatures().exceptionFilters;
  auto isPython = [&](const std::string& id) {
    return std::any_of(pyFilters.begin(), pyFilters.end(), [&](const auto& f) { return f.filter == id; });
  };
  std::vector<ExceptionFilterSpec> forPython, forNative;
  std::vector<bool> toPython;
  for (const auto& f : filters) {
    toPython.push_back(isPython(f.filterId));
    (toPython.back() ? forPython : forNative).push_back(f);
  }
  std::weak_ptr<bool> alive = alive_;
  nativeBreakpoints(BreakpointSet::exception(forNative), [this, alive, reply, forPython, toPython](Result<std::vector<BreakpointReport>> nr) {
    if (alive.expired()) return;
    if (!nr) return reply(nr.takeError());
    auto n = std::move(*nr);
    py_->setBreakpoints(BreakpointSet::exception(forPython), [this, alive, reply, n, toPython](Result<std::vector<BreakpointReport>> pr) {
      if (alive.expired()) return;
      if (!pr) return reply(pr.takeError());
      auto p = std::move(*pr);
      ownedBy(py_.get(), p);
      std::vector<BreakpointReport> out;
      std::size_t pi = 0, ni = 0;
      for (bool python : toPython) {
        if (python && pi < p.size()) out.push_back(p[pi++]);
        else if (!python && ni < n.size()) out.push_back(n[ni++]);
      }
      reply(std::move(out));
    });
  });
}

void MixedBackend::setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                             Reply<std::vector<BreakpointReport>> reply) {
  if (!nativeIn_) return reply(notYetNative(breakpoints.size()));
  native_->setInstructionBreakpoints(breakpoints, ownedBy(native_.get(), std::move(reply)));
}

// A frame or variable of a layer is asked of that layer's backend (the session routes it); what
// comes here names a frame read from memory, or none.
void MixedBackend::dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) {
  if (query.variablesReference || query.frameId)
    return reply(DataBreakpointTarget{std::nullopt, "data breakpoints watch native memory: pick a C/C++ variable", {}});
  native_->dataBreakpointInfo(query, std::move(reply));
}

void MixedBackend::setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                                      Reply<std::vector<BreakpointReport>> reply) {
  if (!nativeIn_) return reply(notYetNative(breakpoints.size()));
  native_->setDataBreakpoints(breakpoints, ownedBy(native_.get(), std::move(reply)));
}

// ---- stops and execution ----

template <class T>
Reply<T> MixedBackend::answeredAtNativeStop(Reply<T> done, Result<T> assumed) {
  auto once = std::make_shared<Reply<T>>(std::move(done));
  std::uint64_t key = nextRelease_++;
  releasing_[key] = [once, assumed] {
    if (*once) std::exchange(*once, nullptr)(assumed);
  };
  std::weak_ptr<bool> alive = alive_;
  return [this, alive, once, key](Result<T> r) {
    if (alive.expired()) return;
    releasing_.erase(key);
    if (*once) std::exchange(*once, nullptr)(std::move(r));
  };
}

template Reply<bool> MixedBackend::answeredAtNativeStop(Reply<bool>, Result<bool>);
template Reply<void> MixedBackend::answeredAtNativeStop(Reply<void>, Result<void>);

void MixedBackend::onStopped(Layer from, const StopReport& stop) {
  if (from == kNative) {
    entryCatchArmed_ = false;  // the native debugger takes it down at any stop
    for (auto& [key, answer] : std::exchange(releasing_, {})) answer();
    if (stepRunsOn(stop)) return;
  } else if (stop.threadId) {
    // The agent's stop ends the thread's step, and with it a catch for the other layer.
    pyStepArmed_.erase(*stop.threadId);
    if (std::exchange(entryCatchArmed_, false)) native_->cancelEntryCatch([](Result<void>) {});
  }
  reportStop(from, stop);
}

void MixedBackend::reportStop(Layer from, const StopReport& stop) {
  StopReport s = stop;
  pyStacks_.clear();
  if (!s.breakpointsOwner) s.breakpointsOwner = &owner(from);
  if (from == kNative) {
    forgetNativeStop();
    nativeStop_ = s;
  } else if (s.threadId) {
    pythonStops_[*s.threadId] = s;
  }
  host_.stopped(s);
}

void MixedBackend::onContinued(Layer from, std::int64_t threadId, bool allThreads) {
  if (from == kNative && quietContinues_ > 0) {
    // A step running on: the client still waits for its stop, which may have come already.
    --quietContinues_;
    return;
  }
  pyStacks_.clear();
  if (from == kNative) {
    forgetNativeStop();
  } else if (allThreads) {
    pythonStops_.clear();
  } else {
    pythonStops_.erase(threadId);
  }
  host_.continued(threadId, allThreads);
  // Threads the agent holds stay stopped when the native debugger lets the others go.
  if (from == kNative)
    for (const auto& [tid, stop] : pythonStops_) host_.stopped(stop);
}

void MixedBackend::forgetNativeStop() {
  nativeStop_.reset();
  pyState_.reset();
  merged_.clear();
  memoryFrames_.clear();
}

void MixedBackend::onExited(const ExitStatus& status) {
  if (exited_) return;
  exited_ = true;
  forgetNativeStop();
  pythonStops_.clear();
  host_.exited(status);
}

MixedBackend::Layer MixedBackend::stopLayerOf(std::int64_t threadId) const {
  if (nativeStop_) return kNative;
  if (pythonStops_.count(threadId) || !pythonStops_.empty()) return kPython;
  return kNative;
}

// A continue or step the client asked for has no `continued` event: the stop it ends is
// forgotten here, when its layer accepts the request.
void MixedBackend::resumePython(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  std::weak_ptr<bool> alive = alive_;
  py_->resume(threadId, singleThread, answeredAtNativeStop<bool>([this, alive, threadId, singleThread, reply](Result<bool> r) {
    if (alive.expired()) return;
    if (r) {
      if (singleThread && !*r) pythonStops_.erase(threadId);
      else pythonStops_.clear();
      pyStacks_.clear();
    }
    reply(std::move(r));
  }, !singleThread));
}

void MixedBackend::resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  if (!nativeStop_) return resumePython(threadId, singleThread, std::move(reply));
  std::weak_ptr<bool> alive = alive_;
  if (!pyStepArmed_.empty())
    return dropArmedSteps([this, alive, threadId, singleThread, reply] {
      if (!alive.expired()) resume(threadId, singleThread, reply);
    });
  bool alsoPython = pythonStops_.count(threadId) > 0;
  native_->resume(threadId, singleThread, [this, alive, reply, threadId, singleThread, alsoPython](Result<bool> r) {
    if (alive.expired()) return;
    if (!r) return reply(std::move(r));
    forgetNativeStop();
    // The thread continued was held by the agent too (stopped at a Python line when the native
    // stop came): it goes on as well. Threads the agent still holds stay stopped (onContinued).
    if (!alsoPython) return reply(std::move(r));
    if (singleThread) pythonStops_.erase(threadId);
    else pythonStops_.clear();
    resumePython(threadId, singleThread, std::move(reply));
  });
}

void MixedBackend::pause(std::int64_t threadId, Reply<void> reply) {
  if (!nativeIn_) return py_->pause(threadId, std::move(reply));
  // The native debugger stops every thread wherever it is, in Python code or in C; the Python
  // frames then come from memory (a Python breakpoint gives the full Python debugger).
  native_->pause(threadId, std::move(reply));
}

void MixedBackend::terminate(bool force, Reply<void> reply) {
  if (!nativeIn_) return py_->terminate(force, std::move(reply));
  native_->terminate(force, std::move(reply));
}

void MixedBackend::detach(Reply<void> reply) {
  if (!nativeIn_) return py_->detach(std::move(reply));
  // The native debugger lets go first (every thread runs again), then the agent releases
  // sys.monitoring: the program runs on as if never debugged.
  std::weak_ptr<bool> alive = alive_;
  native_->detach([this, alive, reply](Result<void> r) {
    if (alive.expired()) return;
    forgetNativeStop();
    py_->detach([reply, r = std::move(r)](Result<void> r2) mutable {
      if (!r) return reply(std::move(r));
      reply(std::move(r2));
    });
  });
}

// ---- values ----
// A frame, variable or source of a layer is asked of that layer's backend: the session routes
// what names it there (FrameInfo::owner). What comes here names a frame read from memory (ours),
// or nothing: then the layer that holds the stop answers.

void MixedBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  auto f = memoryFrames_.find(frameId);
  if (f == memoryFrames_.end())
    return reply(Error{errors::kUnknownFrame, "no frame " + std::to_string(frameId) + " (frames last until the program runs)", true});
  if (f->second.nativeSample) return reply(std::vector<ScopeInfo>{});
  ScopeInfo s;
  s.name = "Locals";
  s.presentationHint = "locals";
  s.variablesReference = frameId;  // a memory frame's locals: the same id
  s.namedVariables = static_cast<std::int64_t>(f->second.locals.size());
  reply(std::vector<ScopeInfo>{s});
}

void MixedBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  auto f = memoryFrames_.find(query.variablesReference);
  if (f == memoryFrames_.end())
    return reply(Error{errors::kUnknownReference, "no variables " + std::to_string(query.variablesReference) + " (they last until the program runs)", true});
  std::vector<ValueInfo> out;
  if (!f->second.localsRead) return reply(std::move(out));
  for (const auto& l : f->second.locals) {
    ValueInfo v;
    v.name = l.name;
    v.type = l.type;
    // Containers show their length; their items, like any other object, need the program to run.
    v.value = l.value.empty() ? "<" + l.type + " object: its value needs the Python program to run>" : l.value;
    if (l.value.rfind("len ", 0) == 0)
      v.value = l.type + " (" + l.value.substr(4) + " items; their values need the Python program to run)";
    out.push_back(std::move(v));
  }
  reply(std::move(out));
}

void MixedBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  if (query.frameId) return reply(Error{errors::kWrongState, kMemoryOnly, true});
  Backend& layer = owner(nativeStop_ ? kNative : kPython);
  layer.evaluate(query, ownedBy(&layer, std::move(reply)));
}

void MixedBackend::setVariable(std::int64_t, const std::string&, const std::string&, Reply<ValueInfo> reply) {
  reply(Error{errors::kWrongState, kMemoryOnly, true});
}

void MixedBackend::setExpression(const std::string& expression, const std::string& value,
                                 std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
  if (frameId) return reply(Error{errors::kWrongState, kMemoryOnly, true});
  Backend& layer = owner(nativeStop_ ? kNative : kPython);
  layer.setExpression(expression, value, frameId, ownedBy(&layer, std::move(reply)));
}

void MixedBackend::completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) {
  if (query.frameId) return reply(std::vector<CompletionEntry>{});
  owner(nativeStop_ ? kNative : kPython).completions(query, std::move(reply));
}

void MixedBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  if (stopLayerOf(threadId) != kNative) return py_->exceptionInfo(threadId, std::move(reply));
  // A signal: said in one line with where it happened and the program's own frame that led
  // there, from the merged stack ("SIGSEGV: ... in memmove, called from load_weights at x.py:17").
  std::weak_ptr<bool> alive = alive_;
  native_->signalInfo(threadId, [this, alive, threadId, reply](Result<ExceptionInfo> r) {
    if (alive.expired() || !r) return reply(std::move(r));
    mergedStack(threadId, [r = std::move(*r), reply](Result<std::vector<FrameInfo>> frames) mutable {
      if (frames) r.description = crashDiagnosis(r.description, *frames);
      reply(std::move(r));
    });
  });
}

void MixedBackend::readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                              Reply<MemoryContents> reply) {
  native_->readMemory(memoryReference, offset, count, std::move(reply));
}

void MixedBackend::writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                               bool allowPartial, Reply<std::int64_t> reply) {
  native_->writeMemory(memoryReference, offset, std::move(data), allowPartial, std::move(reply));
}

void MixedBackend::disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
  native_->disassemble(query, std::move(reply));
}

void MixedBackend::modules(Reply<std::vector<ModuleInfo>> reply) { native_->modules(std::move(reply)); }

void MixedBackend::loadedSources(Reply<std::vector<SourceInfo>> reply) { native_->loadedSources(std::move(reply)); }

void MixedBackend::stepInTargets(std::int64_t, Reply<std::vector<StepInTargetInfo>> reply) {
  reply(std::vector<StepInTargetInfo>{});  // a frame read from memory: nothing to step into from here
}

void MixedBackend::gpuCollector(const GpuCollectorCommand& command, Reply<std::string> reply) {
  py_->gpuCollector(command, std::move(reply));
}

}  // namespace strata::backends
