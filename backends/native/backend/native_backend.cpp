// The native backend: lifecycle, execution control and breakpoints over NativeDebugger, whose
// answers and callbacks come on the engine thread; everything reaches the session by a post.
// What each type becomes on the way is convert.cpp's.
#include "backends/native/backend/native_backend.hpp"
#include "backends/native/backend/convert.hpp"
#include "backends/native/backend/internal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <cstdio>
#include <array>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "strata/protocol/json.hpp"

namespace strata::backends {

namespace dbg = strata::native::debugger;
namespace convert = native_convert;

namespace {

std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Keeps the program's output pipes drained after a detach, so it never dies of SIGPIPE or blocks
// on a full pipe once the adapter has gone: a tiny child of ours reads and discards.
void drainInBackground(std::vector<int> fds) {
  if (fds.empty()) return;
  pid_t child = ::fork();
  if (child != 0) {
    for (int fd : fds) ::close(fd);
    return;
  }
  // Only async-signal-safe calls from here: the adapter is multithreaded.
  // Nothing else of the adapter's stays open here: a socket to a strata-engine kept open would
  // hide the adapter's end from that engine, which would then never let the program go.
  int keep[2] = {fds[0], fds.size() > 1 ? fds[1] : fds[0]};
  if (keep[0] > keep[1]) std::swap(keep[0], keep[1]);
  unsigned from = 3;
  for (int k : keep) {
    if (static_cast<unsigned>(k) > from) ::close_range(from, static_cast<unsigned>(k) - 1, 0);
    from = std::max(from, static_cast<unsigned>(k) + 1);
  }
  ::close_range(from, ~0u, 0);
  struct pollfd p[2] = {{fds[0], POLLIN, 0}, {fds.size() > 1 ? fds[1] : -1, POLLIN, 0}};
  int open = static_cast<int>(fds.size());
  char sink[16384];
  while (open > 0) {
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (auto& one : p) {
      if (one.fd < 0 || one.revents == 0) continue;
      if (::read(one.fd, sink, sizeof sink) <= 0) {
        one.fd = -1;
        --open;
      }
    }
  }
  ::_exit(0);
}

}  // namespace

// ---- teardown off the session thread ----------------------------------------------------------

namespace {

// Debuggers being torn down. Killing or detaching a program and joining the engine thread can
// take a while (a program slow to die, an engine finishing a step), so it happens on a thread
// of its own, never on the session's io_context thread, which other sessions share (--listen).
class Teardowns {
 public:
  static Teardowns& instance() {
    static Teardowns* t = new Teardowns;  // never destroyed: a teardown may outlive main()
    return *t;
  }
  void adopt(std::unique_ptr<dbg::NativeDebugger> debugger) {
    std::lock_guard lock(mutex_);
    ++running_;
    std::thread([this, d = std::move(debugger)]() mutable {
      d.reset();
      std::lock_guard lock(mutex_);
      --running_;
      idle_.notify_all();
    }).detach();
  }
  bool finish(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return idle_.wait_for(lock, limit, [this] { return running_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int running_ = 0;
};

}  // namespace

bool NativeBackend::finishTeardowns(std::chrono::milliseconds limit) { return Teardowns::instance().finish(limit); }

// ---- output pipes -------------------------------------------------------------------------------

struct NativeBackend::Pipe {
  Pipe(asio::io_context& io, int fd, OutputCategory c) : stream(io, fd), category(c) {}
  asio::posix::stream_descriptor stream;
  OutputCategory category;
  std::string carry;
  std::vector<char> buffer = std::vector<char>(32 * 1024);
  bool eof = false;
};

void NativeBackend::readPipe(const std::shared_ptr<Pipe>& pipe) {
  std::weak_ptr<bool> alive = alive_;
  pipe->stream.async_read_some(asio::buffer(pipe->buffer), [this, alive, pipe](const boost::system::error_code& ec,
                                                                               std::size_t n) {
    if (alive.expired() || detached_) return;
    if (ec) {
      pipe->eof = true;
      if (!pipe->carry.empty()) host_.output(pipe->category, protocol::sanitizeUtf8(std::exchange(pipe->carry, {})));
      maybeReportExit();
      return;
    }
    std::string text = protocol::sanitizeUtf8(std::string_view(pipe->buffer.data(), n), &pipe->carry);
    if (!text.empty()) host_.output(pipe->category, std::move(text));
    readPipe(pipe);
  });
}

// ---- plumbing -----------------------------------------------------------------------------------

// The facade calls its callbacks on the engine thread: each one posts its event to the session's
// thread, as onSession() does with results, so both arrive in the order they happened there
// (a `continue` response before the stop it led to). Nothing here keeps `this` on the engine
// thread: the debugger may outlive this backend while it is torn down.
NativeBackend::NativeBackend(asio::io_context& io, BackendHost& host) : io_(io), host_(host) {
  auto post = [io = &io_, alive = std::weak_ptr<bool>(alive_)](std::function<void()> event) {
    asio::post(*io, [alive, event = std::move(event)] {
      if (!alive.expired()) event();
    });
  };
  dbg::Callbacks cb;
  cb.stopped = [this, post](const dbg::DebuggerStop& stop) { post([this, stop] { onStopped(stop); }); };
  cb.exited = [this, post](const native::engine::ExitEvent& exit) { post([this, exit] { onExited(exit); }); };
  cb.breakpointChanged = [this, post](const dbg::BreakpointPlacement& b) {
    post([this, state = convert::toReport(b, true)] { host_.breakpointChanged(state); });
  };
  cb.output = [this, post](const std::string& text) {
    post([this, text] { host_.output(OutputCategory::Console, text); });
  };
  cb.thread = [this, post](pid_t tid, bool started) { post([this, tid, started] { host_.threadChanged(tid, started); }); };
  cb.module = [this, post](const dbg::ModuleEntry& m, bool loaded) {
    post([this, info = convert::toModuleInfo(m, loaded), loaded] {
      if (loaded) modules_[info.path] = info;
      else modules_.erase(info.path);
      host_.moduleChanged(info, loaded ? "new" : "removed");
    });
  };
  // The engine in a process of its own: the program outlives strata-dap (engine_process.hpp).
  debugger_ = std::make_unique<dbg::NativeDebugger>(std::move(cb), dbg::locateEngine(host_.adapterExecutable()));
}

NativeBackend::~NativeBackend() {
  alive_.reset();  // nothing from the engine reaches the session any more
  // A detach asked for just before (the client went away) is already queued on the engine
  // thread, ahead of the teardown, which therefore leaves that program running.
  Teardowns::instance().adopt(std::move(debugger_));
  std::vector<int> fds;
  for (auto& p : pipes_)
    if (!p->eof && p->stream.is_open()) fds.push_back(p->stream.release());
  if (detachRequested_) drainInBackground(std::move(fds));
  else
    for (int fd : fds) ::close(fd);
}

BackendFeatures NativeBackend::features() const { return staticFeatures(); }

BackendFeatures NativeBackend::staticFeatures() {
  BackendFeatures f;
  f.conditionalBreakpoints = f.hitConditionalBreakpoints = f.logPoints = f.functionBreakpoints = true;
  f.evaluateForHovers = f.setVariable = f.exceptionInfo = f.delayedStackTraceLoading = true;
  f.clipboardContext = f.steppingGranularity = true;
  f.dataBreakpoints = f.instructionBreakpoints = f.readMemory = f.writeMemory = f.disassemble = true;
  f.modules = f.stepInTargets = f.loadedSources = true;
  f.exceptionFilters = convert::exceptionFilters();
  return f;
}

// ---- launch, attach, lifecycle --------------------------------------------------------------

void NativeBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  if (spec.argv.empty()) return reply(Error{errors::kNoProgram, "no program to launch", true});
  const std::string& program = spec.argv[0];
  {
    std::ifstream in(program, std::ios::binary);
    char magic[4] = {};
    in.read(magic, 4);
    if (!in || std::memcmp(magic, "\x7f" "ELF", 4) != 0)
      return reply(Error{errors::kNotElf,
                         "'" + program + "' is not an ELF executable; Strata debugs native programs (ELF) "
                         "and Python scripts (.py). To run it without debugging, set \"noDebug\": true",
                         true});
  }
  if (spec.console != Console::Internal)
    host_.output(OutputCategory::Console,
                 "Strata runs native programs under the debugger with their output in the Debug Console; "
                 "console '" + std::string(spec.console == Console::IntegratedTerminal ? "integratedTerminal"
                                                                                      : "externalTerminal") +
                     "' is available only with \"noDebug\": true.\n");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return reply(Error{errors::kSystemCallFailed, std::string("pipe: ") + std::strerror(errno), true});
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]), ::close(out[1]);
    return reply(Error{errors::kSystemCallFailed, std::string("pipe: ") + std::strerror(errno), true});
  }
  native::engine::LaunchOptions o;
  o.program = program;
  o.args.assign(spec.argv.begin() + 1, spec.argv.end());
  o.cwd = spec.cwd;
  o.env = spec.environment;
  o.stdoutFd = out[1];
  o.stderrFd = err[1];
  o.onDisconnect = spec.detachOnDisconnect ? native::engine::OnDisconnect::Detach : native::engine::OnDisconnect::Terminate;
  launched_ = true;
  stopOnEntry_ = spec.stopOnEntry;
  if (!spec.coreOnCrash.empty()) (void)debugger_->setCoreOnCrash(spec.coreOnCrash);
  auto outPipe = std::make_shared<Pipe>(io_, out[0], OutputCategory::Stdout);
  auto errPipe = std::make_shared<Pipe>(io_, err[0], OutputCategory::Stderr);
  std::string display = spec.displayName.empty() ? program : spec.displayName;
  auto started = onSession([this, reply, outPipe, errPipe, display](Result<pid_t> r) {
    if (!r) return reply(r.takeError());
    pid_ = *r;
    pipes_ = {outPipe, errPipe};
    readPipe(outPipe);
    readPipe(errPipe);
    reply({});
    host_.processStarted(display, pid_, true);
  });
  // The child has its copies once the launch is done; ours of the write ends close then, on the
  // engine thread, so EOF comes when the program's end closes them, whatever became of us.
  debugger_->launch(std::move(o), [writeEnds = std::array<int, 2>{out[1], err[1]}, started](Result<pid_t> r) mutable {
    ::close(writeEnds[0]);
    ::close(writeEnds[1]);
    started(std::move(r));
  });
}

void NativeBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  if (!spec.processId) return reply(Error{errors::kBadProcessId, "no processId to attach to", true});
  std::int64_t id = *spec.processId;
  if (id <= 0 || id > 4194304)
    return reply(Error{errors::kBadProcessId, "processId " + std::to_string(id) + " is not a process id", true});
  pid_t pid = static_cast<pid_t>(id);
  std::string proc = "/proc/" + std::to_string(pid);
  if (::access(proc.c_str(), F_OK) != 0)
    return reply(Error{errors::kNoSuchProcess, "no process with id " + std::to_string(pid) +
                                         " exists (it may have exited); find the id with `pgrep NAME` or `ps -e`",
                       true});
  if (pid == ::getpid())
    return reply(Error{errors::kAttachToSelf, "process " + std::to_string(pid) + " is strata-dap itself", true});
  launched_ = false;
  stopOnEntry_ = spec.stopOnEntry;
  if (!spec.coreOnCrash.empty()) (void)debugger_->setCoreOnCrash(spec.coreOnCrash);
  std::string name = readFirstLine(proc + "/comm");
  debugger_->attach(pid, onSession([this, reply, pid, name](Result<void> r) {
    if (!r) {
      // The engine explains a refusal (tracer, Yama, ids, dumpability) and names the operation,
      // which the attach handler's "cannot attach: " already says.
      std::string text = r.error().message;
      if (text.rfind("attach to ", 0) == 0) text.erase(0, 10);
      return reply(Error{r.error().id, text, true});
    }
    pid_ = pid;
    reply({});
    host_.processStarted(name.empty() ? std::to_string(pid) : name, pid, false);
  }));
}

void NativeBackend::configurationDone(Reply<void> reply) {
  debugger_->configurationDone(stopOnEntry_, onSession([reply](Result<void> r) { reply(std::move(r)); }));
}

void NativeBackend::terminate(bool force, Reply<void> reply) {
  if (ended_ || pid_ <= 0) return reply({});
  if (force) {
    debugger_->terminate(onSession([reply](Result<void> r) { reply(std::move(r)); }));
    return;
  }
  // A polite SIGTERM reaches the program once it runs: stopped at a breakpoint, it runs on.
  if (::kill(pid_, SIGTERM) != 0)
    return reply(Error{errors::kSignalFailed, std::string("SIGTERM: ") + std::strerror(errno), true});
  debugger_->resume(onSession([reply](Result<void>) { reply({}); }));
}

void NativeBackend::detach(Reply<void> reply) {
  if (ended_ || detached_ || pid_ <= 0) return reply({});
  detachRequested_ = true;
  debugger_->detach(onSession([this, reply](Result<void> r) {
    if (r) detached_ = true;
    reply(std::move(r));
  }));
}

void NativeBackend::onExited(const native::engine::ExitEvent& exit) {
  if (ended_ || detached_) return;
  pendingExit_ = convert::toExitStatus(exit);
  exceptions_.clear();
  // The last output may still be in the pipes: report the exit after it, or after a short wait
  // (a child of the program may hold the pipes open).
  exitTimer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(500));
  std::weak_ptr<bool> alive = alive_;
  exitTimer_->async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired()) return;
    for (auto& p : pipes_) p->eof = true;
    maybeReportExit();
  });
  maybeReportExit();
}

void NativeBackend::maybeReportExit() {
  if (!pendingExit_ || ended_) return;
  for (auto& p : pipes_)
    if (!p->eof) return;
  ended_ = true;
  if (exitTimer_) exitTimer_->cancel();
  host_.exited(*pendingExit_);
}

// ---- stops and execution control ------------------------------------------------------------------

void NativeBackend::onStopped(const dbg::DebuggerStop& stop) {
  if (ended_ || detached_) return;
  indexedCounts_.clear();
  if (stop.reason == dbg::DebuggerStopReason::Exception) exceptions_[stop.tid] = stop;
  host_.stopped(convert::toReport(stop, pid_, breakpointKinds_));
}

void NativeBackend::resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  (void)singleThread;  // the engine is all-stop: every thread runs
  exceptions_.clear();
  debugger_->resume(onSession([this, threadId, reply](Result<void> r) {
    if (!r) return reply(r.takeError());
    reply(true);
    host_.continued(threadId, true);
  }));
}

void NativeBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  auto g = convert::toDebugger(options.granularity);
  pid_t tid = static_cast<pid_t>(options.threadId);
  exceptions_.clear();
  auto started = onSession([this, tid, reply](Result<void> r) {
    if (!r) return reply(r.takeError());
    reply({});
    host_.continued(tid, true);
  });
  if (kind == StepKind::Over) debugger_->next(tid, g, std::move(started));
  else if (kind == StepKind::Out) debugger_->stepOut(tid, std::move(started));
  else if (options.targetId) debugger_->stepInto(tid, static_cast<int>(*options.targetId), std::move(started));
  else debugger_->stepIn(tid, g, std::move(started));
}

void NativeBackend::pause(std::int64_t threadId, Reply<void> reply) {
  (void)threadId;  // all-stop: pausing one thread stops them all
  debugger_->pause(onSession([reply](Result<void> r) { reply(std::move(r)); }));
}

void NativeBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  if (ended_ || detached_ || pid_ <= 0) return reply(std::vector<ThreadInfo>{});
  debugger_->threads(onSession([this, reply](Result<std::vector<native::engine::ThreadEntry>> r) {
    // Gone while its last output is read: no threads, not an error.
    if (!r && pendingExit_) return reply(std::vector<ThreadInfo>{});
    if (!r) return reply(r.takeError());
    std::vector<ThreadInfo> out;
    for (const auto& t : *r) out.push_back(convert::toThreadInfo(t));
    reply(std::move(out));
  }));
}

// ---- breakpoints ----------------------------------------------------------------------------------

void NativeBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  switch (set.kind) {
    case BreakpointSet::Kind::Source: return placeSources(set.path, set.sources, std::move(reply));
    case BreakpointSet::Kind::Function: return placeFunctions(set.functions, std::move(reply));
    case BreakpointSet::Kind::Exception: return setFilters(set.filters, std::move(reply));
  }
}

void NativeBackend::placeSources(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                                 Reply<std::vector<BreakpointReport>> reply) {
  std::vector<dbg::SourceBreakpoint> list;
  for (const auto& b : breakpoints) list.push_back(convert::toDebugger(b));
  debugger_->setSourceBreakpoints(path, std::move(list), onSession([reply](Result<std::vector<dbg::BreakpointPlacement>> r) {
    if (!r) return reply(r.takeError());
    std::vector<BreakpointReport> out;
    for (const auto& b : *r) out.push_back(convert::toReport(b, false));
    reply(std::move(out));
  }));
}

void NativeBackend::placeFunctions(const std::vector<FunctionBreakpointSpec>& breakpoints,
                                   Reply<std::vector<BreakpointReport>> reply) {
  std::vector<dbg::FunctionBreakpoint> list;
  for (const auto& b : breakpoints) list.push_back(convert::toDebugger(b));
  debugger_->setFunctionBreakpoints(std::move(list), onSession([this, reply](Result<std::vector<dbg::BreakpointPlacement>> r) {
    if (!r) return reply(r.takeError());
    std::vector<BreakpointReport> out;
    for (const auto& b : *r) {
      if (b.id > 0) breakpointKinds_[b.id] = "function breakpoint";
      out.push_back(convert::toReport(b, true));
    }
    reply(std::move(out));
  }));
}

void NativeBackend::setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                              Reply<std::vector<BreakpointReport>> reply) {
  // Addresses that could not be read are not sent; their places keep the error.
  std::vector<dbg::InstructionBreakpoint> valid;
  std::vector<std::string> errors;
  for (const auto& b : breakpoints) {
    auto address = convert::parseMemoryReference(b.instructionReference, b.offset);
    errors.push_back(address ? "" : address.error().message);
    if (address) valid.push_back(convert::toDebugger(b, *address));
  }
  debugger_->setInstructionBreakpoints(std::move(valid), onSession([this, reply, errors](Result<std::vector<dbg::BreakpointPlacement>> r) {
          if (!r) return reply(r.takeError());
          std::vector<BreakpointReport> out;
          std::size_t next = 0;
          for (const auto& e : errors) {
            if (!e.empty()) {
              BreakpointReport bad;
              bad.message = e;
              out.push_back(bad);
              continue;
            }
            BreakpointReport s = next < r->size() ? convert::toReport((*r)[next], true) : BreakpointReport{};
            if (next < r->size() && (*r)[next].id > 0) breakpointKinds_[(*r)[next].id] = "instruction breakpoint";
            ++next;
            out.push_back(std::move(s));
          }
          reply(std::move(out));
        }));
}

void NativeBackend::setFilters(const std::vector<ExceptionFilterSpec>& filters,
                               Reply<std::vector<BreakpointReport>> reply) {
  std::vector<int> signals;
  bool cuda = false;
  std::vector<BreakpointReport> out;
  for (const auto& f : filters) {
    int signo = convert::signalOfFilter(f.filterId);
    bool isCuda = convert::isCudaFilter(f.filterId);
    BreakpointReport s;
    if (signo == 0 && !isCuda) {
      s.message = "unknown exception filter '" + f.filterId + "'";
    } else if (f.condition && !f.condition->empty()) {
      s.message = isCuda ? "conditions on the CUDA errors filter are not supported"
                         : "conditions on signal filters are not supported";
    } else {
      s.verified = true;
      if (isCuda) cuda = true;
      else signals.push_back(signo);
    }
    out.push_back(std::move(s));
  }
  // Both run on the engine thread in order: the second's answer comes after the first's.
  debugger_->setGpuErrorStops(cuda);
  debugger_->setStopSignals(std::move(signals), onSession([reply, out](Result<void> r) {
    if (!r) return reply(r.takeError());
    reply(out);
  }));
}

void NativeBackend::dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) {
  auto answer = [reply](Result<dbg::DataTarget> r) { reply(convert::toDataBreakpointTarget(r)); };
  if (query.asAddress) {
    auto address = convert::parseMemoryReference(query.name, 0);
    if (!address) return answer(address.takeError());
    dbg::DataTarget t;
    t.address = *address;
    t.size = static_cast<std::uint32_t>(query.bytes.value_or(8));
    t.name = query.name;
    return answer(t);
  }
  if (query.variablesReference) {
    debugger_->dataTargetOfVariable(static_cast<int>(*query.variablesReference), query.name, onSession(answer));
    return;
  }
  debugger_->dataTarget(query.name, static_cast<int>(query.frameId.value_or(0)), onSession(answer));
}

void NativeBackend::setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                                       Reply<std::vector<BreakpointReport>> reply) {
  // Requests that cannot be watchpoints are not sent; their places keep the reason.
  std::vector<dbg::DataBreakpoint> list;
  std::vector<std::string> errors;
  for (const auto& b : breakpoints) {
    auto d = convert::toDebugger(b);
    errors.push_back(d ? "" : d.error().message);
    if (d) list.push_back(*d);
  }
  debugger_->setDataBreakpoints(std::move(list), onSession([this, reply, errors](Result<std::vector<dbg::BreakpointPlacement>> r) {
    if (!r) return reply(r.takeError());
    std::vector<BreakpointReport> out;
    std::size_t next = 0;
    for (const auto& e : errors) {
      BreakpointReport s;
      if (!e.empty()) {
        s.message = e;
      } else if (next < r->size()) {
        const auto& b = (*r)[next++];
        s = convert::toReport(b, false);
        if (b.id > 0) breakpointKinds_[b.id] = "data breakpoint";
      }
      out.push_back(std::move(s));
    }
    reply(std::move(out));
  }));
}

std::unique_ptr<NativeLayer> makeNativeLayer(asio::io_context& io, BackendHost& host) {
  return std::make_unique<NativeBackend>(io, host);
}

BackendFeatures nativeFeatures() { return NativeBackend::staticFeatures(); }

}  // namespace strata::backends
