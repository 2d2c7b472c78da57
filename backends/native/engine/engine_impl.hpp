// Private state of the ptrace engine; touched only on the engine thread unless noted.
#pragma once

#include <sys/user.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "strata/native/engine/engine.hpp"
#include "strata/native/engine/signals.hpp"

namespace strata::native::engine {

// One int3 location shared by every logical breakpoint at that address (user breakpoints,
// the dynamic linker hook, a step-out's temporary stop). Inserted while anyone wants it.
struct BreakpointSite {
  std::uint64_t address = 0;
  std::uint8_t original = 0;
  bool inserted = false;
  std::vector<BreakpointId> users;  // enabled user breakpoints here
  bool rendezvous = false;
  bool stepOut = false;
  bool wanted() const { return !users.empty() || rendezvous || stepOut; }
};

struct UserBreakpoint {
  BreakpointId id = 0;
  std::uint64_t address = 0;
  bool enabled = true;
  StopPredicate condition;
  std::uint64_t hits = 0;
};

struct Watchpoint {
  bool used = false;
  std::uint64_t address = 0;
  int size = 0;
  WatchKind kind = WatchKind::Write;
};

struct Thread {
  pid_t tid = 0;
  bool stopped = false;
  bool awaitingFirstStop = false;  // created by clone, its initial stop not seen yet
  bool interruptPending = false;   // PTRACE_INTERRUPT sent, its stop not seen yet
  bool exiting = false;            // in PTRACE_EVENT_EXIT stop
  int injectSignal = 0;            // delivered on the next resume
  std::uint64_t atSite = 0;        // pc rewound onto this site by a hit: step over it first
  std::optional<EngineStop> pending;  // a stop not reported yet
  std::uint64_t pendingSeq = 0;
  bool regsValid = false;
  bool regsDirty = false;  // cache changed by the engine, not yet written to the thread
  user_regs_struct regs{};
};

struct StepOutPlan {
  pid_t tid = 0;
  std::uint64_t address = 0;
  std::uint64_t stackPointer = 0;
};

struct RangePlan {
  pid_t tid = 0;
  std::uint64_t low = 0, high = 0;
  bool overCalls = false;
};

struct Process {
  pid_t pid = 0;
  bool launched = false;
  bool running = false;  // resumed by the user (threads may still be stopping)
  int memFd = -1;
  std::map<pid_t, Thread> threads;
  std::map<std::uint64_t, BreakpointSite> sites;
  std::map<BreakpointId, UserBreakpoint> breakpoints;
  Watchpoint watch[4];
  bool debugRegistersUsed = false;  // ever set: threads must be written even when all are off
  std::optional<StepOutPlan> stepOut;
  std::optional<RangePlan> range;  // a stepRange in progress
  bool rangeResume = false;        // its call returned: go on stepping instead of resuming
  bool pauseRequested = false;
  bool resumeAfterCallback = false;  // resume() called from inside onStopped
  bool rendezvousPending = false;
  pid_t rendezvousTid = 0;
  bool killing = false;
  int leaderStatus = -1;  // the leader's exit status, kept until its last thread is gone
  std::set<pid_t> exitedThreads;  // recently exited, whose clone event may still be on its way
  std::uint64_t stopSeq = 0;
  // Dynamic linker rendezvous.
  std::uint64_t rDebug = 0;   // address of struct r_debug, 0 until known
  std::uint64_t rBrk = 0;     // _dl_debug_state
  std::uint64_t interpBase = 0;
  std::string interpPath;
  std::vector<LoadedObject> objects;
};

class EngineMemory final : public MemoryAccess {
 public:
  explicit EngineMemory(Engine::Impl& impl) : impl_(impl) {}
  Result<void> read(std::uint64_t address, void* buffer, std::size_t size) override;
  Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) override;

 private:
  Engine::Impl& impl_;
};

// What one waitpid report meant for its thread.
enum class Outcome {
  Handled,    // nothing to tell: the thread may run on (with injectSignal)
  Trap,       // a single-step finished
  Report,     // thread.pending holds a stop to report
  StepOver,   // stopped on a breakpoint site nobody wants to stop at: step over, run on
  Gone,       // the thread (or the whole process) exited
};

struct Engine::Impl {
  explicit Impl(EventSink& s) : sink(s), memory(*this) {}

  EventSink& sink;
  EngineMemory memory;
  std::thread worker;
  std::thread::id workerId;
  pid_t waker = -1;  // child stopped by SIGSTOP to wake the engine out of waitpid
  std::mutex queueMutex;
  std::deque<std::function<void()>> queue;
  bool quit = false;
  std::atomic<pid_t> currentPid{0};
  std::optional<Process> proc;
  std::set<pid_t> detachedChildren;  // launched then detached: still ours to reap
  std::set<pid_t> forkedChildren;    // fork children stopped before their parent's event
  BreakpointId nextBreakpointId = 1;
  Error startError{errors::kEngineStopped, "the native engine has not started", true};
  std::atomic<bool> started{false};

  bool onEngineThread() const { return std::this_thread::get_id() == workerId; }
  void post(std::function<void()> task);
  void loop();
  void drainQueue();

  template <class T>
  std::future<Result<T>> call(std::function<Result<T>()> fn) {
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto future = promise->get_future();
    if (!started) {
      promise->set_value(startError);
      return future;
    }
    if (onEngineThread()) {
      promise->set_value(fn());
      return future;
    }
    post([promise, fn = std::move(fn)]() { promise->set_value(fn()); });
    return future;
  }

  SiteObserver siteObserver;  // Engine::observeSites
  int wakeFd = -1;             // eventfd written by post() (Engine::serveWhileStopped)
  int idleFd = -1;
  std::function<void()> idleHandler;
  int runningFd = -1;                   // eventfd written as the thread goes into waitpid
  std::atomic<bool> inWaitpid{false};   // blocked in waitpid: only the doorbell reaches it
  void siteChanged(std::uint64_t address, int original) {
    if (siteObserver) siteObserver(address, original);
  }

  int quiesced = 0;           // > 0 while a sink callback runs with every thread stopped
  StepOverCounts stepOvers;   // for the engine's life, across processes

  // launch.cpp: launch and attach.
  Result<pid_t> doLaunch(const LaunchOptions& options);
  Result<void> doAttach(pid_t pid);
  Result<void> seizeAll(pid_t pid);

  // process.cpp: events, all-stop, resume, detach, kill.
  Result<void> doDetach();
  Result<void> doKill();
  Result<void> doPause();
  Result<void> doStepInstruction(pid_t tid);
  Result<ThreadRegisters> doGetRegisters(pid_t tid);
  Result<void> doSetRegisters(const ThreadRegisters& registers);
  Result<std::vector<ThreadEntry>> doThreads();
  Result<void> requireStopped() const;
  void dispatch(pid_t tid, int status);
  bool isOurThread(pid_t pid, pid_t tid);
  void releaseFork(pid_t child, bool copiedMemory);
  Outcome handleWait(pid_t tid, int status);
  Outcome processEvent(pid_t tid, int status);
  Result<void> stopAll();
  Result<void> resumeAll();
  void reportStop(Thread& thread);
  void reportExit(pid_t pid, int status);
  Result<void> continueThread(Thread& thread, int signal);
  Result<Outcome> singleStep(Thread& thread);
  Thread* findThread(pid_t tid);
  void queueStop(Thread& thread, EngineStop event);
  template <class F>
  Result<void> withStopped(F&& body);
  Result<user_regs_struct*> regs(Thread& thread);
  Result<void> setPc(Thread& thread, std::uint64_t pc);
  Result<void> flushRegs(Thread& thread);
  void flushAllRegs();
  bool emulateAtSite(Thread& thread, const BreakpointSite& site);

  // breakpoints.cpp
  Result<BreakpointId> doAddBreakpoint(std::uint64_t address, const StopPredicate& condition);
  Result<void> doRemoveBreakpoint(BreakpointId id);
  Result<void> doEnableBreakpoint(BreakpointId id, bool enabled);
  Result<BreakpointSite*> acquireSite(std::uint64_t address);
  Result<void> syncSite(std::uint64_t address);  // insert/remove to match wanted(), drop unused
  Outcome onTrap(Thread& thread);
  Result<Outcome> stepOverSite(Thread& thread);
  Result<void> doStepOut(pid_t tid, std::optional<ReturnTarget> target);
  void cancelStepOut();

  // stepping.cpp
  Result<void> doStepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls);
  Result<void> continueRange();
  Result<void> removeAllSites();

  // watchpoints.cpp
  Result<void> applyDebugRegisters(pid_t tid);
  Result<void> clearDebugRegisters(pid_t tid);
  Result<int> doAddWatchpoint(std::uint64_t address, int size, WatchKind kind);
  Result<void> doRemoveWatchpoint(int slot);
  bool onWatchTrap(Thread& thread);

  // memory.cpp
  Result<void> readRaw(std::uint64_t address, void* buffer, std::size_t size);
  Result<void> writeRaw(std::uint64_t address, const void* buffer, std::size_t size);
  bool emulateMove(user_regs_struct& regs, std::uint64_t address, const std::uint8_t* code);
  Result<void> readMemory(std::uint64_t address, void* buffer, std::size_t size);
  Result<void> writeMemory(std::uint64_t address, const void* buffer, std::size_t size);
  Result<void> openMemory();

  // rendezvous.cpp
  Result<void> initRendezvousAtExec();
  Result<void> initRendezvousAttached();
  Result<void> onRendezvous();
};

inline EngineStop stopOf(EngineStopReason reason) {
  EngineStop ev;
  ev.reason = reason;
  return ev;
}

// signals.cpp: strata/native/engine/signals.hpp

// attach_refusal.cpp
// A refused attach (errno from PTRACE_SEIZE) explained: who traces it, Yama, ids, dumpability.
Error attachError(pid_t pid, int err);

template <class F>
Result<void> Engine::Impl::withStopped(F&& body) {
  if (!proc) return Error{errors::kNoProcess, "no process is being debugged", true};
  bool wasRunning = proc->running && quiesced == 0;
  if (wasRunning) {
    if (auto r = stopAll(); !r) return r;
    proc->running = false;
  }
  Result<void> result = body();
  if (wasRunning && proc) {
    if (auto r = resumeAll(); !r && result) return r;
  }
  return result;
}

}  // namespace strata::native::engine
