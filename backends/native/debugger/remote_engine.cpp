// RemoteEngine: the EngineApi of a strata-engine process (engine_process.hpp, wire.hpp).
//
// One dispatcher thread here plays the engine thread's part for the debugger: work posted with
// runOnEngineThread runs there, every request made there is a blocking round trip, and an event
// that arrives meanwhile is handed to the sink at once, nested in the call, as the in-process
// engine does when a call of the sink causes one (an attach's stop).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "strata/native/debugger/engine_process.hpp"
#include "strata/hex.hpp"
#include "wire.hpp"

extern char** environ;

namespace strata::native::debugger {

namespace {

using namespace engine;
using wire::Kind;

class RemoteEngine;

class RemoteMemory final : public MemoryAccess {
 public:
  explicit RemoteMemory(RemoteEngine& engine) : engine_(engine) {}
  Result<void> read(std::uint64_t address, void* buffer, std::size_t size) override;
  Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) override;

 private:
  RemoteEngine& engine_;
};

template <class T>
std::future<Result<T>> ready(Result<T> value) {
  std::promise<Result<T>> p;
  p.set_value(std::move(value));
  return p.get_future();
}

class RemoteEngine final : public EngineApi {
 public:
  RemoteEngine(EventSink& sink, std::string program) : sink_(sink), program_(std::move(program)) {}
  ~RemoteEngine() override { stop(); }
  void stop() override;

  std::future<Result<pid_t>> launch(LaunchOptions options) override {
    std::vector<int> fds;
    for (int fd : {options.stdinFd, options.stdoutFd, options.stderrFd})
      if (fd >= 0) fds.push_back(fd);
    wire::Writer w;
    wire::put(w, options);
    return call<pid_t>(Kind::Launch, w.take(), [this](wire::Reader& r) -> Result<pid_t> {
      auto pid = r.pod<pid_t>();
      pid_ = pid;
      launched_ = true;
      return pid;
    }, std::move(fds));
  }
  std::future<Result<void>> attach(pid_t pid) override {
    wire::Writer w;
    w.pod(pid);
    return call<void>(Kind::Attach, w.take(), [this, pid](wire::Reader&) -> Result<void> {
      pid_ = pid;
      launched_ = false;
      return {};
    });
  }
  std::future<Result<void>> detach() override {
    return call<void>(Kind::Detach, {}, [this](wire::Reader&) -> Result<void> {
      pid_ = 0;
      return {};
    });
  }
  std::future<Result<void>> kill() override { return callVoid(Kind::Kill); }
  std::future<Result<void>> resume() override { return callVoid(Kind::Resume); }
  std::future<Result<void>> pause() override { return callVoid(Kind::Pause); }
  std::future<Result<void>> stepInstruction(pid_t tid) override {
    wire::Writer w;
    w.pod(tid);
    return callVoid(Kind::StepInstruction, w.take());
  }
  std::future<Result<void>> stepOut(pid_t tid, std::optional<ReturnTarget> target = {}) override {
    wire::Writer w;
    w.pod(tid).boolean(target.has_value());
    if (target) w.pod(target->returnAddress).pod(target->stackPointerAfterReturn);
    return callVoid(Kind::StepOut, w.take());
  }
  std::future<Result<void>> stepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls) override {
    wire::Writer w;
    w.pod(tid).pod(low).pod(high).boolean(overCalls);
    return callVoid(Kind::StepRange, w.take());
  }
  std::future<Result<BreakpointId>> addBreakpoint(std::uint64_t address, StopPredicate condition = {},
                                                  HitRule rule = {}) override {
    // A rule is decided in the engine; a predicate alone (rare: a filter switched at run time)
    // stops the program and is decided here.
    bool byRule = rule.group != 0 || !rule.empty();
    wire::Writer w;
    w.pod(address);
    wire::put(w, byRule ? rule : HitRule{});
    StopPredicate filter = byRule ? StopPredicate{} : std::move(condition);
    return call<BreakpointId>(Kind::AddBreakpoint, w.take(), [this, filter](wire::Reader& r) -> Result<BreakpointId> {
      auto id = r.pod<BreakpointId>();
      if (filter) filters_[id] = Filter{filter, 0};
      return id;
    });
  }
  std::future<Result<void>> removeBreakpoint(BreakpointId id) override {
    wire::Writer w;
    w.pod(id);
    return call<void>(Kind::RemoveBreakpoint, w.take(), [this, id](wire::Reader&) -> Result<void> {
      filters_.erase(id);
      return {};
    });
  }
  std::future<Result<void>> enableBreakpoint(BreakpointId id, bool enabled) override {
    wire::Writer w;
    w.pod(id).boolean(enabled);
    return callVoid(Kind::EnableBreakpoint, w.take());
  }
  bool evaluatesRules() const override { return true; }
  std::future<Result<int>> addWatchpoint(std::uint64_t address, int size, WatchKind kind) override {
    wire::Writer w;
    w.pod(address).pod(static_cast<std::int32_t>(size)).pod(static_cast<std::int32_t>(kind));
    return call<int>(Kind::AddWatchpoint, w.take(), [](wire::Reader& r) -> Result<int> { return r.pod<std::int32_t>(); });
  }
  std::future<Result<void>> removeWatchpoint(int slot) override {
    wire::Writer w;
    w.pod(static_cast<std::int32_t>(slot));
    return callVoid(Kind::RemoveWatchpoint, w.take());
  }
  // Registers are kept from the stop (and each asked for since) until the threads run again.
  std::future<Result<ThreadRegisters>> registers(pid_t tid) override {
    return onThread<ThreadRegisters>([this, tid]() -> Result<ThreadRegisters> {
      if (auto it = registers_.find(tid); it != registers_.end()) return it->second;
      wire::Writer w;
      w.pod(tid);
      return roundTrip<ThreadRegisters>(Kind::Registers, w.take(), [this, tid](wire::Reader& r) -> Result<ThreadRegisters> {
        ThreadRegisters regs = wire::getRegisters(r);
        registers_[tid] = regs;
        return regs;
      }, {});
    });
  }
  std::future<Result<void>> setRegisters(const ThreadRegisters& registers) override {
    wire::Writer w;
    wire::put(w, registers);
    return call<void>(Kind::SetRegisters, w.take(), [this, registers](wire::Reader&) -> Result<void> {
      registers_[registers.tid] = registers;
      return {};
    });
  }
  std::future<Result<std::vector<ThreadEntry>>> threads() override {
    return call<std::vector<ThreadEntry>>(Kind::Threads, {}, [](wire::Reader& r) -> Result<std::vector<ThreadEntry>> {
      std::vector<ThreadEntry> out;
      auto n = r.pod<std::uint32_t>();
      for (std::uint32_t i = 0; i < n && !r.failed(); ++i) {
        ThreadEntry t;
        t.tid = r.pod<pid_t>();
        t.name = r.str();
        out.push_back(std::move(t));
      }
      return out;
    });
  }
  std::future<Result<std::vector<LoadedObject>>> loadedObjects() override {
    return call<std::vector<LoadedObject>>(Kind::LoadedObjects, {},
                                           [](wire::Reader& r) -> Result<std::vector<LoadedObject>> { return wire::getObjects(r); });
  }
  std::future<Result<StepOverCounts>> stepOverCounts() override {
    return call<StepOverCounts>(Kind::StepOverCounts, {}, [](wire::Reader& r) -> Result<StepOverCounts> {
      StepOverCounts c;
      c.emulated = r.pod<std::uint64_t>();
      c.singleStepped = r.pod<std::uint64_t>();
      return c;
    });
  }
  MemoryAccess& memory() override { return memory_; }
  std::future<Result<void>> runOnEngineThread(std::function<Result<void>()> work) override {
    return onThread<void>(std::move(work));
  }
  std::future<Result<void>> whileStopped(std::function<Result<void>()> work) override {
    return onThread<void>([this, work = std::move(work)]() -> Result<void> {
      if (auto begin = roundTrip<void>(Kind::HoldBegin, {}, nullptr, {}); !begin) return begin;
      Result<void> result = work();
      auto end = roundTrip<void>(Kind::HoldEnd, {}, nullptr, {});
      if (!end && result) return end;
      return result;
    });
  }
  pid_t pid() const override { return pid_.load(); }

  Result<void> readMemory(std::uint64_t address, void* buffer, std::size_t size);
  Result<void> writeMemory(std::uint64_t address, const void* buffer, std::size_t size) {
    wire::Writer w;
    w.pod(address).str(std::string(static_cast<const char*>(buffer), size));
    return callVoid(Kind::WriteMemory, w.take()).get();
  }

 private:
  template <class T>
  using Decode = std::function<Result<T>(wire::Reader&)>;

  bool onDispatcher() const { return std::this_thread::get_id() == dispatcherId_; }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      work_.push_back(std::move(task));
    }
    std::uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
  }
  template <class T>
  std::future<Result<T>> onThread(std::function<Result<T>()> fn) {
    if (!onDispatcher() && !ensureStarted()) return ready<T>(startError_);
    if (onDispatcher()) return ready<T>(fn());
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto future = promise->get_future();
    post([promise, fn = std::move(fn)]() { promise->set_value(fn()); });
    return future;
  }
  template <class T>
  std::future<Result<T>> call(Kind kind, std::string payload, Decode<T> decode, std::vector<int> fds = {}) {
    return onThread<T>([this, kind, payload = std::move(payload), decode = std::move(decode), fds = std::move(fds)]() {
      return roundTrip<T>(kind, payload, decode, fds);
    });
  }
  std::future<Result<void>> callVoid(Kind kind, std::string payload = {}) {
    return call<void>(kind, std::move(payload), nullptr);
  }
  template <class T>
  Result<T> roundTrip(Kind kind, const std::string& payload, const Decode<T>& decode, const std::vector<int>& fds) {
    if (broken_) return *broken_;
    // What may run a thread, or change what a stop looked like, forgets the registers kept.
    if (kind != Kind::Registers && kind != Kind::Threads && kind != Kind::LoadedObjects && kind != Kind::AddBreakpoint &&
        kind != Kind::RemoveBreakpoint && kind != Kind::EnableBreakpoint && kind != Kind::StepOverCounts &&
        kind != Kind::WriteMemory && kind != Kind::SetRegisters && kind != Kind::AddWatchpoint && kind != Kind::RemoveWatchpoint)
      registers_.clear();
    std::uint32_t seq = nextSeq_++;
    if (!wire::send(fd_, kind, seq, payload, fds)) {
      lose("the connection to strata-engine broke");
      return *broken_;
    }
    for (;;) {
      wire::Message m;
      if (!wire::receive(fd_, m)) {
        lose("strata-engine ended while a request waited");
        return *broken_;
      }
      if (m.kind == Kind::Reply && m.seq == seq) {
        wire::Reader r(m.payload);
        if (!r.boolean()) return wire::getError(r);
        if constexpr (std::is_void_v<T>) {
          if (decode) return decode(r);
          return Result<void>{};
        } else {
          return decode(r);
        }
      }
      absorb(m);
      if (broken_) return *broken_;
    }
  }
  bool ensureStarted();
  void start();
  void loop();
  void absorb(wire::Message& m);
  void handleEvent(wire::Message& m);
  bool swallowStop(EngineStop& stop);
  void lose(const std::string& why);

  struct Filter {
    StopPredicate predicate;
    std::uint64_t hits = 0;
  };

  EventSink& sink_;
  std::string program_;
  std::mutex startMutex_;
  bool tried_ = false;
  RemoteMemory memory_{*this};
  int fd_ = -1;
  pid_t child_ = -1;
  int wake_ = -1;
  std::thread dispatcher_;
  std::thread::id dispatcherId_;
  std::mutex mutex_;
  std::deque<std::function<void()>> work_;
  bool quit_ = false;
  std::atomic<bool> started_{false};
  Error startError_{errors::kEngineProcess, "strata-engine has not started", true};
  std::optional<Error> broken_;  // dispatcher only
  std::uint32_t nextSeq_ = 1;
  std::atomic<pid_t> pid_{0};
  bool launched_ = false;
  std::map<BreakpointId, Filter> filters_;  // dispatcher only
  std::map<pid_t, ThreadRegisters> registers_;  // dispatcher only: this stop's, as asked
  std::mutex memoryMutex_;  // sites_, memFd_
  std::map<std::uint64_t, std::uint8_t> sites_;
  int memFd_ = -1;
  pid_t memPid_ = 0;
};

// The process starts with the first request: a debugger made and never used (a session that
// turned out to be Python only) costs none.
bool RemoteEngine::ensureStarted() {
  std::lock_guard lock(startMutex_);
  if (!tried_) {
    tried_ = true;
    start();
  }
  return started_;
}

void RemoteEngine::start() {
  const std::string& program = program_;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    startError_ = errnoError(errors::kEngineProcess, "socketpair for strata-engine");
    return;
  }
  // Its end becomes the engine's fd 3 (dup2 onto itself would keep close-on-exec).
  int theirs = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
  ::close(sv[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);  // stdout may be DAP's
  posix_spawn_file_actions_adddup2(&actions, theirs, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::string fdArg = "3";
  char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>("--fd"), fdArg.data(), nullptr};
  int rc = ::posix_spawn(&child_, program.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(theirs);
  if (rc != 0) {
    ::close(sv[0]);
    child_ = -1;
    startError_ = Error{errors::kEngineProcess, "start " + program + ": " + std::strerror(rc), true};
    return;
  }
  fd_ = sv[0];
  wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::promise<void> go;
  dispatcher_ = std::thread([this, f = go.get_future()]() mutable {
    f.wait();
    loop();
  });
  dispatcherId_ = dispatcher_.get_id();
  started_ = true;
  go.set_value();
}

void RemoteEngine::stop() {
  std::lock_guard startLock(startMutex_);
  tried_ = true;  // no start after a stop
  if (!started_) return;
  post([this]() {
    // As the in-process engine: a launched program is killed, an attached one let go.
    if (!broken_ && pid_ != 0) (void)roundTrip<void>(launched_ ? Kind::Kill : Kind::Detach, {}, nullptr, {});
    std::lock_guard lock(mutex_);
    quit_ = true;
  });
  dispatcher_.join();
  started_ = false;
  startError_ = Error{errors::kEngineStopped, "the native engine has stopped", true};
  ::close(fd_);  // the engine sees the end of its socket, has nothing left to let go, and exits
  ::close(wake_);
  if (memFd_ >= 0) ::close(memFd_);
  int status = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::waitpid(child_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(child_, SIGKILL);
      (void)::waitpid(child_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void RemoteEngine::loop() {
  for (;;) {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lock(mutex_);
      if (quit_) return;
      batch.swap(work_);
    }
    for (auto& task : batch) task();
    if (!batch.empty()) continue;
    pollfd fds[2] = {{wake_, POLLIN, 0}, {broken_ ? -1 : fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) continue;
    if (fds[0].revents & POLLIN) {
      std::uint64_t n = 0;
      (void)!::read(wake_, &n, sizeof n);
    }
    if (fds[1].revents) {
      wire::Message m;
      if (!wire::receive(fd_, m)) lose("strata-engine ended");
      else absorb(m);
    }
  }
}

void RemoteEngine::absorb(wire::Message& m) {
  for (int fd : m.fds) ::close(fd);
  if (wire::isEvent(m.kind)) return handleEvent(m);
  wire::Reader r(m.payload);
  switch (m.kind) {
    case Kind::Sites: {
      auto address = r.pod<std::uint64_t>();
      auto original = r.pod<std::int32_t>();
      std::lock_guard lock(memoryMutex_);
      if (original == -2) {
        sites_.clear();
        // A new process or a new image: /proc/PID/mem of the old one reads nothing.
        if (memFd_ >= 0) ::close(memFd_);
        memFd_ = -1;
        memPid_ = 0;
      } else if (original < 0) {
        sites_.erase(address);
      } else {
        sites_[address] = static_cast<std::uint8_t>(original);
      }
      return;
    }
    case Kind::Output: return sink_.onBreakpointOutput(m.payload);
    default: return;  // a reply nobody waits for
  }
}

// A stop only predicates held here may swallow (all of its breakpoints said run on).
bool RemoteEngine::swallowStop(EngineStop& stop) {
  if (stop.reason != EngineStopReason::Breakpoint || filters_.empty()) return false;
  std::vector<BreakpointId> kept;
  std::optional<ThreadRegisters> regs;
  bool filtered = false;
  for (BreakpointId id : stop.breakpoints) {
    auto it = filters_.find(id);
    if (it == filters_.end()) {
      kept.push_back(id);
      continue;
    }
    filtered = true;
    if (!regs) {
      auto got = registers(stop.tid).get();  // on this thread: at once, from the stop's copy
      if (!got) {
        kept.push_back(id);
        continue;
      }
      regs = std::move(got).value();
    }
    HitContext hit{stop.tid, id, stop.pc, ++it->second.hits, &*regs, &memory_};
    if (it->second.predicate(hit)) kept.push_back(id);
  }
  if (!filtered) return false;
  if (kept.empty()) {
    (void)roundTrip<void>(Kind::Resume, {}, nullptr, {});  // at once after this event
    return true;
  }
  stop.breakpoints = std::move(kept);
  return false;
}

void RemoteEngine::handleEvent(wire::Message& m) {
  wire::Reader r(m.payload);
  registers_.clear();
  switch (m.kind) {
    case Kind::Stopped: {
      EngineStop stop = wire::getStop(r);
      if (r.boolean()) registers_[stop.tid] = wire::getRegisters(r);
      // The entry stop of a launch (an attach's stop) comes before the request's answer.
      if (pid_ == 0 && stop.pid > 0) pid_ = stop.pid;
      if (!swallowStop(stop)) sink_.onStopped(stop);
      break;
    }
    case Kind::Exited: {
      ExitEvent exit = wire::getExit(r);
      if (exit.pid == pid_) pid_ = 0;
      sink_.onExited(exit);
      break;
    }
    case Kind::ThreadStarted:
    case Kind::ThreadExited: {
      auto pid = r.pod<pid_t>();
      auto tid = r.pod<pid_t>();
      if (m.kind == Kind::ThreadStarted) sink_.onThreadStarted(pid, tid);
      else sink_.onThreadExited(pid, tid);
      break;
    }
    case Kind::Libraries: {
      LibraryEvent event;
      event.pid = r.pod<pid_t>();
      event.added = wire::getObjects(r);
      event.removed = wire::getObjects(r);
      if (pid_ == 0 && event.pid > 0) pid_ = event.pid;
      sink_.onLibraries(event);
      break;
    }
    case Kind::Signal: {
      auto pid = r.pod<pid_t>();
      auto tid = r.pod<pid_t>();
      sink_.onSignal(pid, tid, r.pod<std::int32_t>());
      break;
    }
    default: break;
  }
  if (!broken_ && !wire::send(fd_, Kind::EventDone, 0, {})) lose("the connection to strata-engine broke");
}

void RemoteEngine::lose(const std::string& why) {
  if (broken_) return;
  broken_ = Error{errors::kEngineProcess, why + ": the program is no longer debugged", true};
  pid_t pid = pid_.exchange(0);
  if (pid == 0) return;
  // A launched program died with the engine (PTRACE_O_EXITKILL); an attached one was let go
  // by the kernel. Either way this session's program is gone from it.
  ExitEvent exit;
  exit.pid = pid;
  exit.signaled = launched_;
  exit.signal = launched_ ? SIGKILL : 0;
  exit.description = why + (launched_ ? ": the program was killed with it" : ": the program was let go");
  sink_.onExited(exit);
}

Result<void> RemoteEngine::readMemory(std::uint64_t address, void* buffer, std::size_t size) {
  pid_t pid = pid_.load();
  if (pid == 0) return Error{errors::kNoProcess, "read memory: no process is being debugged", true};
  if (size == 0) return {};
  iovec local{buffer, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
  std::size_t done = n > 0 ? static_cast<std::size_t>(n) : 0;
  auto* out = static_cast<std::uint8_t*>(buffer);
  std::lock_guard lock(memoryMutex_);
  if (done < size) {
    // Pages without read permission (or a read across mappings): /proc/PID/mem.
    if (memPid_ != pid || memFd_ < 0) {
      if (memFd_ >= 0) ::close(memFd_);
      memFd_ = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
      memPid_ = pid;
      if (memFd_ < 0) return errnoError(errors::kMemoryUnreadable, "open /proc/" + std::to_string(pid) + "/mem");
    }
    while (done < size) {
      ssize_t m = ::pread(memFd_, out + done, size - done, static_cast<off_t>(address + done));
      if (m < 0 && errno == EINTR) continue;
      std::string where = std::to_string(size - done) + " bytes at " + hexAddress(address + done);
      if (m < 0) return errnoError(errors::kMemoryUnreadable, "read memory, " + where);
      if (m == 0) return Error{errors::kMemoryUnreadable, "read memory, " + where + ": not mapped", true};
      done += static_cast<std::size_t>(m);
    }
  }
  for (auto it = sites_.lower_bound(address); it != sites_.end() && it->first < address + size; ++it)
    if (out[it->first - address] == 0xCC) out[it->first - address] = it->second;
  return {};
}

Result<void> RemoteMemory::read(std::uint64_t address, void* buffer, std::size_t size) {
  return engine_.readMemory(address, buffer, size);
}

Result<void> RemoteMemory::write(std::uint64_t address, const void* buffer, std::size_t size) {
  return engine_.writeMemory(address, buffer, size);
}

}  // namespace

std::unique_ptr<EngineApi> startRemoteEngine(EventSink& sink, const std::string& program) {
  return std::make_unique<RemoteEngine>(sink, program);
}

}  // namespace strata::native::debugger
