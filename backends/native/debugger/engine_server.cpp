// strata-engine's side of the engine protocol (wire.hpp): today's Engine, its requests read from
// the socket on the engine thread itself, its events sent there, and breakpoint rules decided
// here (hit_rules.hpp) so that a false condition costs no round trip. When the client goes away
// (end of file, SIGTERM/SIGINT/SIGHUP), every breakpoint and watchpoint comes out and the
// program is let go: detached, or for a launched one with onDisconnect "terminate", SIGTERM
// then SIGKILL.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "strata/native/debugger/engine_process.hpp"
#include "strata/native/debugger/hit_rules.hpp"
#include "strata/native/symbols/module_map.hpp"
#include "wire.hpp"

namespace strata::native::debugger {

namespace {

using namespace engine;
namespace sym = strata::native::symbols;
using wire::Kind;

class Server final : public EventSink {
 public:
  explicit Server(int fd) : fd_(fd) {}
  int run(int signalFd);

  // EventSink: the engine thread, the process held until the client says EventDone.
  void onStopped(const EngineStop& event) override {
    wire::Writer w;
    wire::put(w, event);
    // The stopped thread's registers come along: a stop's first question is its stack.
    auto regs = engine_.registers(event.tid).get();
    w.boolean(regs.ok());
    if (regs) wire::put(w, *regs);
    sendEvent(Kind::Stopped, w.take());
  }
  void onExited(const ExitEvent& event) override {
    wire::Writer w;
    wire::put(w, event);
    sendEvent(Kind::Exited, w.take());
  }
  void onThreadStarted(pid_t pid, pid_t tid) override {
    wire::Writer w;
    w.pod(pid).pod(tid);
    sendEvent(Kind::ThreadStarted, w.take());
  }
  void onThreadExited(pid_t pid, pid_t tid) override {
    wire::Writer w;
    w.pod(pid).pod(tid);
    sendEvent(Kind::ThreadExited, w.take());
  }
  void onLibraries(const LibraryEvent& event) override {
    if (modulesLoaded_) {
      for (const auto& gone : event.removed) modules_.remove(gone.path);
      for (const auto& added : event.added) (void)modules_.add(added);
    }
    wire::Writer w;
    w.pod(event.pid);
    wire::put(w, event.added);
    wire::put(w, event.removed);
    sendEvent(Kind::Libraries, w.take());
  }
  void onSignal(pid_t pid, pid_t tid, int signo) override {
    wire::Writer w;
    w.pod(pid).pod(tid).pod(static_cast<std::int32_t>(signo));
    sendEvent(Kind::Signal, w.take());
  }

 private:
  void serveAvailable();
  void dispatch(const wire::Message& m);
  void handle(const wire::Message& m, wire::Reader& r);
  void sendEvent(Kind kind, std::string payload);
  void reply(std::uint32_t seq, std::string value) {
    if (lost_) return;
    if (!wire::send(fd_, Kind::Reply, seq, "\x01" + value)) lost_ = true;
  }
  void replyError(std::uint32_t seq, const Error& e) {
    if (lost_) return;
    if (!wire::send(fd_, Kind::Reply, seq, wire::replyError(e))) lost_ = true;
  }
  template <class T, class Put>
  void replyWith(std::uint32_t seq, Result<T> r, Put put) {
    if (!r) return replyError(seq, r.error());
    wire::Writer w;
    put(w, *r);
    reply(seq, w.take());
  }
  void replyVoid(std::uint32_t seq, const Result<void>& r) {
    if (!r) return replyError(seq, r.error());
    reply(seq, {});
  }
  StopPredicate predicateFor(const HitRule& rule);
  void letGo();
  [[noreturn]] void letGoStuck();

  int fd_;
  int runningFd_ = -1;
  std::atomic<bool> lost_{false};
  std::atomic<OnDisconnect> onDisconnect_{OnDisconnect::Terminate};
  std::atomic<bool> launched_{false};
  int holding_ = 0;           // HoldBegin without its HoldEnd yet
  std::uint32_t holdEndSeq_ = 0;
  sym::SymbolCache cache_;
  sym::ModuleMap modules_{cache_};
  bool modulesLoaded_ = false;  // only once a rule needs symbols
  std::map<std::uint32_t, std::shared_ptr<std::uint64_t>> counters_;
  // The int3 sites (address → original byte) and the program, for the main thread when the
  // engine thread is stuck (letGoStuck).
  std::mutex sitesMutex_;
  std::map<std::uint64_t, std::uint8_t> sites_;
  std::atomic<pid_t> pid_{0};
  Engine engine_{*this};  // last: its thread calls into everything above
};

// Engine thread: every message already waiting (requests; a stray EventDone is ignored).
void Server::serveAvailable() {
  while (!lost_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    wire::Message m;
    if (!wire::receive(fd_, m)) {
      lost_ = true;
      return;
    }
    dispatch(m);
  }
}

void Server::dispatch(const wire::Message& m) {
  if (m.kind == Kind::EventDone) return;
  wire::Reader r(m.payload);
  handle(m, r);
  for (int fd : m.fds) ::close(fd);
}

// Sent with the process held; requests made while the client handles it run at once, as calls
// from an in-process sink do.
void Server::sendEvent(Kind kind, std::string payload) {
  if (lost_) return;
  if (!wire::send(fd_, kind, 0, payload)) {
    lost_ = true;
    return;
  }
  while (!lost_) {
    wire::Message m;
    if (!wire::receive(fd_, m)) {
      lost_ = true;
      return;
    }
    if (m.kind == Kind::EventDone) return;
    dispatch(m);
  }
}

StopPredicate Server::predicateFor(const HitRule& rule) {
  auto compiled = CompiledRule::compile(rule);
  if (!compiled) return {};  // the client compiled it first; a rule that fails stops every hit
  std::shared_ptr<std::uint64_t> counter;
  if (rule.group != 0) {
    auto& c = counters_[rule.group];
    if (!c) c = std::make_shared<std::uint64_t>(0);
    counter = c;
  } else {
    counter = std::make_shared<std::uint64_t>(0);
  }
  if ((!rule.condition.empty() || !rule.logMessage.empty()) && !modulesLoaded_) {
    modulesLoaded_ = true;
    if (auto objects = engine_.loadedObjects().get(); objects)
      for (const auto& o : *objects) (void)modules_.add(o);
  }
  return [this, rule = std::move(compiled).value(), counter](const HitContext& hit) {
    return rule->decide(hit, modules_, *counter, [this](const std::string& text) {
      if (!lost_ && !wire::send(fd_, Kind::Output, 0, text)) lost_ = true;
    });
  };
}

void Server::handle(const wire::Message& m, wire::Reader& r) {
  std::uint32_t seq = m.seq;
  auto voidOf = [&](std::future<Result<void>> f) { replyVoid(seq, f.get()); };
  switch (m.kind) {
    case Kind::Launch: {
      LaunchOptions o = wire::getLaunch(r);
      std::size_t next = 0;
      for (int* slot : {&o.stdinFd, &o.stdoutFd, &o.stderrFd})
        if (*slot == 0) *slot = next < m.fds.size() ? m.fds[next++] : -1;
      onDisconnect_ = o.onDisconnect;
      launched_ = true;
      return replyWith(seq, engine_.launch(o).get(), [](wire::Writer& w, pid_t p) { w.pod(p); });
    }
    case Kind::Attach: {
      auto pid = r.pod<pid_t>();
      launched_ = false;
      return voidOf(engine_.attach(pid));
    }
    case Kind::Detach: return voidOf(engine_.detach());
    case Kind::Kill: return voidOf(engine_.kill());
    case Kind::Resume: return voidOf(engine_.resume());
    case Kind::Pause: return voidOf(engine_.pause());
    case Kind::StepInstruction: return voidOf(engine_.stepInstruction(r.pod<pid_t>()));
    case Kind::StepOut: {
      auto tid = r.pod<pid_t>();
      std::optional<ReturnTarget> target;
      if (r.boolean()) {
        ReturnTarget t;
        t.returnAddress = r.pod<std::uint64_t>();
        t.stackPointerAfterReturn = r.pod<std::uint64_t>();
        target = t;
      }
      return voidOf(engine_.stepOut(tid, target));
    }
    case Kind::StepRange: {
      auto tid = r.pod<pid_t>();
      auto low = r.pod<std::uint64_t>();
      auto high = r.pod<std::uint64_t>();
      bool over = r.boolean();
      return voidOf(engine_.stepRange(tid, low, high, over));
    }
    case Kind::AddBreakpoint: {
      auto address = r.pod<std::uint64_t>();
      HitRule rule = wire::getRule(r);
      StopPredicate predicate = predicateFor(rule);
      if (modulesLoaded_ && (!rule.condition.empty() || !rule.logMessage.empty())) {
        // The scopes at the address read now, not on the first hit (as strata-dap's own index
        // was when it placed the breakpoint).
        if (const sym::Module* m = modules_.moduleFor(address); m && m->symbols && m->symbols->hasDebugInfo())
          (void)m->symbols->scopesAt(address - m->object.loadBias);
      }
      return replyWith(seq, engine_.addBreakpoint(address, std::move(predicate)).get(),
                       [](wire::Writer& w, BreakpointId id) { w.pod(id); });
    }
    case Kind::RemoveBreakpoint: return voidOf(engine_.removeBreakpoint(r.pod<BreakpointId>()));
    case Kind::EnableBreakpoint: {
      auto id = r.pod<BreakpointId>();
      return voidOf(engine_.enableBreakpoint(id, r.boolean()));
    }
    case Kind::AddWatchpoint: {
      auto address = r.pod<std::uint64_t>();
      auto size = r.pod<std::int32_t>();
      auto kind = static_cast<WatchKind>(r.pod<std::int32_t>());
      return replyWith(seq, engine_.addWatchpoint(address, size, kind).get(),
                       [](wire::Writer& w, int slot) { w.pod(static_cast<std::int32_t>(slot)); });
    }
    case Kind::RemoveWatchpoint: return voidOf(engine_.removeWatchpoint(r.pod<std::int32_t>()));
    case Kind::Registers:
      return replyWith(seq, engine_.registers(r.pod<pid_t>()).get(),
                       [](wire::Writer& w, const ThreadRegisters& regs) { wire::put(w, regs); });
    case Kind::SetRegisters: return voidOf(engine_.setRegisters(wire::getRegisters(r)));
    case Kind::Threads:
      return replyWith(seq, engine_.threads().get(), [](wire::Writer& w, const std::vector<ThreadEntry>& list) {
        w.pod(static_cast<std::uint32_t>(list.size()));
        for (const auto& t : list) w.pod(t.tid).str(t.name);
      });
    case Kind::LoadedObjects:
      return replyWith(seq, engine_.loadedObjects().get(),
                       [](wire::Writer& w, const std::vector<LoadedObject>& list) { wire::put(w, list); });
    case Kind::StepOverCounts:
      return replyWith(seq, engine_.stepOverCounts().get(),
                       [](wire::Writer& w, const StepOverCounts& c) { w.pod(c.emulated).pod(c.singleStepped); });
    case Kind::WriteMemory: {
      auto address = r.pod<std::uint64_t>();
      std::string bytes = r.str();
      return replyVoid(seq, engine_.memory().write(address, bytes.data(), bytes.size()));
    }
    case Kind::HoldBegin: {
      // Every thread stopped; the client works (reading memory itself, asking for registers)
      // until HoldEnd, answered once the threads run again.
      bool answered = false;
      auto held = engine_.whileStopped([&]() -> Result<void> {
        reply(seq, {});
        answered = true;
        ++holding_;
        int depth = holding_;
        while (!lost_ && holding_ >= depth) {
          wire::Message next;
          if (!wire::receive(fd_, next)) {
            lost_ = true;
            break;
          }
          if (next.kind == Kind::HoldEnd) {
            holdEndSeq_ = next.seq;
            --holding_;
            break;
          }
          dispatch(next);
        }
        return {};
      }).get();
      if (!answered) return replyError(seq, held.ok() ? Error{errors::kInternal, "hold: not run", true} : held.error());
      if (held) reply(holdEndSeq_, {});
      else replyError(holdEndSeq_, held.error());
      return;
    }
    default:
      return replyError(seq, Error{errors::kEngineProcess, "strata-engine: unknown request " +
                                                              std::to_string(static_cast<int>(m.kind)), true});
  }
}

// The client is gone: nothing of the debugger stays in the program.
void Server::letGo() {
  pid_t pid = engine_.pid();
  if (pid == 0) return;
  (void)engine_.detach().get();  // breakpoints, watchpoints and our registers out; threads run
  if (!launched_ || onDisconnect_ == OnDisconnect::Detach) return;
  // Ours to reap: the engine launched it.
  ::kill(pid, SIGTERM);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno == ECHILD)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

int Server::run(int signalFd) {
  (void)engine_.runOnEngineThread([this]() -> Result<void> {
    engine_.observeSites([this](std::uint64_t address, int original) {
      {
        std::lock_guard lock(sitesMutex_);
        if (original == -2) sites_.clear();
        else if (original < 0) sites_.erase(address);
        else sites_[address] = static_cast<std::uint8_t>(original);
        pid_ = engine_.pid();
      }
      wire::Writer w;
      w.pod(address).pod(static_cast<std::int32_t>(original));
      if (!lost_ && !wire::send(fd_, Kind::Sites, 0, w.take())) lost_ = true;
    });
    runningFd_ = engine_.serveWhileStopped(fd_, [this] { serveAvailable(); });
    return {};
  }).get();
  // The client's end closed (POLLRDHUP: even with requests unread, whose answers nobody would
  // read), or SIGTERM, SIGINT, SIGHUP: as if the client went away. Requests are this thread's
  // business only while the engine thread sits in waitpid (a program runs); else that thread
  // reads them itself, and this one watches for the next time it goes into waitpid.
  auto gone = [&](int timeoutMs, bool watchRequests, bool* readable) {
    pollfd fds[3] = {{fd_, static_cast<short>(POLLRDHUP | (watchRequests ? POLLIN : 0)), 0},
                     {signalFd, POLLIN, 0},
                     {runningFd_, POLLIN, 0}};
    if (::poll(fds, 3, timeoutMs) < 0) return false;
    if (fds[2].revents & POLLIN) {
      std::uint64_t n = 0;
      (void)!::read(runningFd_, &n, sizeof n);
    }
    if (readable) *readable = (fds[0].revents & POLLIN) != 0;
    return (fds[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0 || (fds[1].revents & POLLIN) != 0;
  };
  while (!lost_) {
    bool readable = false;
    if (gone(-1, engine_.inWaitpid(), &readable)) break;
    if (!readable || !engine_.inWaitpid()) continue;
    auto served = engine_.runOnEngineThread([this]() -> Result<void> {
      serveAvailable();
      return {};
    });
    // A request may take the engine thread a while; the client's loss is watched meanwhile.
    bool lostMeanwhile = false;
    while (served.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
      if ((lostMeanwhile = gone(0, false, nullptr))) break;
    if (lostMeanwhile) break;
  }
  lost_ = true;
  auto done = engine_.runOnEngineThread([this]() -> Result<void> {
    letGo();
    return {};
  });
  // An engine thread that does not get to it is stuck in a request (single-stepping a system
  // call that never returns, the engine's known limit).
  if (done.wait_for(std::chrono::seconds(3)) != std::future_status::ready) letGoStuck();
  engine_.stop();
  return 0;
}

// Without the engine thread: the code bytes back through /proc/PID/mem (allowed to any process
// that may trace the program), a launched program that was to be terminated killed, and out.
// The kernel detaches the program's threads when this process ends.
void Server::letGoStuck() {
  pid_t pid = engine_.pid();
  if (pid == 0) pid = pid_.load();
  if (pid > 0) {
    int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDWR | O_CLOEXEC);
    std::lock_guard lock(sitesMutex_);
    if (mem >= 0) {
      for (const auto& [address, original] : sites_)
        (void)!::pwrite(mem, &original, 1, static_cast<off_t>(address));
      ::close(mem);
    }
    if (launched_ && onDisconnect_ == OnDisconnect::Terminate) ::kill(pid, SIGKILL);
  }
  std::_Exit(0);
}

}  // namespace

int serveEngine(int fd) {
  // The programs it launches must not hold the socket (strata-dap would not see this end close).
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);
  (void)::setsid();  // out of the terminal's process group: a Ctrl-C there is not ours
  sigset_t quitSignals;
  sigemptyset(&quitSignals);
  sigaddset(&quitSignals, SIGTERM);
  sigaddset(&quitSignals, SIGINT);
  sigaddset(&quitSignals, SIGHUP);
  // Blocked before the engine thread starts, so it inherits the mask; read through a signalfd.
  pthread_sigmask(SIG_BLOCK, &quitSignals, nullptr);
  int signalFd = signalfd(-1, &quitSignals, SFD_CLOEXEC);
  Server server(fd);
  int rc = server.run(signalFd);
  ::close(fd);
  return rc;
}

}  // namespace strata::native::debugger
