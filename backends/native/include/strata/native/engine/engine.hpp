// The ptrace engine: one thread that owns every ptrace/waitpid call for one traced process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/native/target_access.hpp"
#include "strata/result.hpp"

namespace strata::native::engine {

using BreakpointId = std::uint32_t;

enum class EngineStopReason {
  Entry,       // launched program, first instruction of the dynamic linker, no user code run
  Attach,      // every thread of an attached process stopped
  Breakpoint,  // a user breakpoint (see EngineStop::breakpoints)
  Step,        // stepInstruction finished
  StepOut,     // stepOut reached its return address in the right frame
  Watchpoint,  // a hardware watchpoint fired (see EngineStop::watchpointSlot)
  Exception,   // SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (see EngineStop::signal)
  Pause,       // pause() or a sink asking to stay stopped
  Exec,        // the program called execve; breakpoints of the old image are gone
};

const char* reasonName(EngineStopReason reason);

struct SignalInfo {
  int signo = 0;
  int code = 0;                  // si_code
  std::uint64_t faultAddress = 0;  // si_addr for the fault signals
  std::string description;       // "SIGSEGV: address not mapped to object at 0x0"
};

// Delivered when every thread of the process is stopped.
struct EngineStop {
  pid_t pid = 0;
  pid_t tid = 0;  // the thread the stop is about
  EngineStopReason reason = EngineStopReason::Pause;
  std::uint64_t pc = 0;
  std::vector<BreakpointId> breakpoints;  // user breakpoints hit (their conditions said stop)
  int watchpointSlot = -1;                // 0..3
  std::uint64_t watchAddress = 0;
  SignalInfo signal;                      // reason == Exception
};

struct ExitEvent {
  pid_t pid = 0;
  bool signaled = false;  // killed by a signal rather than exiting
  int exitCode = 0;       // valid when !signaled
  int signal = 0;         // valid when signaled
  std::string description;  // "exited with code 3" / "killed by SIGKILL"
};

struct LibraryEvent {
  pid_t pid = 0;
  std::vector<LoadedObject> added;
  std::vector<LoadedObject> removed;
};

struct ThreadEntry {
  pid_t tid = 0;
  std::string name;  // /proc/PID/task/TID/comm, read when asked
};

// Receives the engine's events. Every method is called on the engine thread; the process is
// stopped (all threads) during onStopped and onLibraries, and Engine calls made from inside a
// callback run immediately (their futures are ready on return), so a sink can insert
// breakpoints in a library before its code runs.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void onStopped(const EngineStop& event) = 0;
  virtual void onExited(const ExitEvent& event) = 0;
  virtual void onThreadStarted(pid_t /*pid*/, pid_t /*tid*/) {}
  virtual void onThreadExited(pid_t /*pid*/, pid_t /*tid*/) {}
  // The process resumes after this returns unless the sink called Engine::pause().
  virtual void onLibraries(const LibraryEvent& /*event*/) {}
  // A signal passed on to the program without stopping it (everything but the fault signals).
  virtual void onSignal(pid_t /*pid*/, pid_t /*tid*/, int /*signo*/) {}
  // A line a breakpoint's HitRule printed (a log point, a condition that failed), from an
  // engine that evaluates rules itself (RemoteEngine).
  virtual void onBreakpointOutput(const std::string& /*text*/) {}
};

// What a launched program gets when the engine loses its client without being told (the
// adapter killed, the connection gone): only an engine in a process of its own outlives it.
enum class OnDisconnect {
  Terminate,  // breakpoints out, SIGTERM, SIGKILL after a grace period
  Detach,     // breakpoints out, the program runs on
};

struct LaunchOptions {
  std::string program;                // path, or a name looked up in PATH
  std::vector<std::string> args;      // argv[1..]
  std::string cwd;                    // empty: the engine's
  std::optional<std::vector<std::string>> env;  // "K=V"; absent: inherit
  int stdinFd = -1;                   // -1: /dev/null
  int stdoutFd = -1;                  // -1: inherit
  int stderrFd = -1;                  // -1: inherit
  OnDisconnect onDisconnect = OnDisconnect::Terminate;
};

// What a breakpoint hit sees when its condition is asked (on the engine thread, hitting thread
// stopped). Returning false resumes the program without any event: the cheap path for
// conditions and hit counts.
struct HitContext {
  pid_t tid = 0;
  BreakpointId id = 0;
  std::uint64_t address = 0;
  std::uint64_t hitCount = 0;  // including this hit
  const ThreadRegisters* registers = nullptr;
  MemoryAccess* memory = nullptr;
};
using StopPredicate = std::function<bool(const HitContext&)>;

// A breakpoint's stop decision in data, for an engine that cannot run the caller's closures
// (RemoteEngine: they would cost a round trip between processes on every hit). Filters first
// (thread, stack pointer), then the condition, the hit count and the log message, as the
// debugger's own breakpoints do (strata/native/debugger/hit_rules.hpp evaluates them).
struct HitRule {
  pid_t thread = 0;                 // only this thread's hits count (0: every thread)
  std::uint64_t stackPointer = 0;   // and only with rsp at this value (0: any)
  std::uint32_t group = 0;          // sites of one breakpoint share hit counts (0: this site alone)
  std::string condition;            // source expression at the hit, empty: none
  std::string hitCondition;         // DAP's hit condition ("1000", ">= 5", "% 4"), empty: none
  std::string logMessage;           // a log point: printed on each hit that passes, never stops
  int breakpointNumber = 0;         // named in "breakpoint N: condition failed: ..."
  bool neverStop = false;           // hits are counted, nothing stops (a switched-off filter)
  bool empty() const {
    return thread == 0 && stackPointer == 0 && condition.empty() && hitCondition.empty() && logMessage.empty() &&
           !neverStop;
  }
};

enum class WatchKind { Write, ReadWrite };

// Where stepOut stops: the first time `tid` reaches `returnAddress` with its stack pointer at
// or above `stackPointerAfterReturn` (so deeper recursive frames returning to the same place
// don't count). The symbolic side gets both from its unwinder.
struct ReturnTarget {
  std::uint64_t returnAddress = 0;
  std::uint64_t stackPointerAfterReturn = 0;
};

// How the engine has run the instruction under an inserted breakpoint when a thread went on
// past it: emulated on the saved registers (the int3 stays, other threads keep running), or
// the int3 lifted and the thread single-stepped while every other thread waits. Counted over
// the engine's life (the engine's own breakpoints, in the dynamic linker, included).
struct StepOverCounts {
  std::uint64_t emulated = 0;
  std::uint64_t singleStepped = 0;
};

// Whether this machine's debug registers really trap (some hypervisors accept DR0–DR7 writes
// but never fire them). Probed once with a short-lived child of the calling thread.
Result<bool> hardwareWatchpointsWork();

// What the debugger needs of an engine. Thread-safe: any thread may call any method; calls made
// on the engine's own thread (inside a callback or runOnEngineThread) run at once. Never destroy
// an engine from its own callbacks.
class EngineApi {
 public:
  virtual ~EngineApi() = default;
  // Runs the work already queued, then kills a launched process or detaches an attached one and
  // ends the engine thread. Calls made afterwards are never answered (their futures break).
  virtual void stop() = 0;

  // Process stopped at entry (onStopped(Entry) follows); returns its pid.
  virtual std::future<Result<pid_t>> launch(LaunchOptions options) = 0;
  // Every thread seized and stopped (onStopped(Attach) follows).
  virtual std::future<Result<void>> attach(pid_t pid) = 0;
  virtual std::future<Result<void>> detach() = 0;
  virtual std::future<Result<void>> kill() = 0;

  // Resumes every thread; a stop another thread reached meanwhile is reported first instead.
  virtual std::future<Result<void>> resume() = 0;
  // Stops every thread (onStopped(Pause)); a no-op when already stopped.
  virtual std::future<Result<void>> pause() = 0;
  // One instruction of `tid` while the other threads stay stopped (onStopped(Step)).
  virtual std::future<Result<void>> stepInstruction(pid_t tid) = 0;
  // Without a target: return address and stack from the frame pointer (rbp), or from the stack
  // pointer when the thread is at the first instruction of a function.
  virtual std::future<Result<void>> stepOut(pid_t tid, std::optional<ReturnTarget> target = {}) = 0;
  // Single-steps `tid` inside the engine while its pc stays in [low, high) (the addresses of a
  // source line), then reports a Step stop: one request per line step, not one per
  // instruction. With overCalls, a call made from the range runs at full speed (all threads)
  // until it returns to the range, recursion included.
  virtual std::future<Result<void>> stepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls) = 0;

  // The predicate (when given) decides each hit; else the rule (when not empty, evaluated by an
  // engine that can: a RemoteEngine); else every hit stops.
  virtual std::future<Result<BreakpointId>> addBreakpoint(std::uint64_t address, StopPredicate condition = {},
                                                          HitRule rule = {}) = 0;
  virtual std::future<Result<void>> removeBreakpoint(BreakpointId id) = 0;
  virtual std::future<Result<void>> enableBreakpoint(BreakpointId id, bool enabled) = 0;
  // Whether rules reach the engine (addBreakpoint's rule), or only predicates do.
  virtual bool evaluatesRules() const { return false; }

  // Returns the debug register slot (0..3). The address must be aligned to the size.
  virtual std::future<Result<int>> addWatchpoint(std::uint64_t address, int size, WatchKind kind) = 0;
  virtual std::future<Result<void>> removeWatchpoint(int slot) = 0;

  virtual std::future<Result<ThreadRegisters>> registers(pid_t tid) = 0;
  virtual std::future<Result<void>> setRegisters(const ThreadRegisters& registers) = 0;
  virtual std::future<Result<std::vector<ThreadEntry>>> threads() = 0;
  virtual std::future<Result<std::vector<LoadedObject>>> loadedObjects() = 0;
  virtual std::future<Result<StepOverCounts>> stepOverCounts() = 0;

  // Memory of the current process; reads hide inserted int3 bytes.
  virtual MemoryAccess& memory() = 0;

  // Runs `work` on the engine thread (the thread that may call every method at once).
  virtual std::future<Result<void>> runOnEngineThread(std::function<Result<void>()> work) = 0;
  // Runs `work` on the engine thread with every thread of a running process stopped for it
  // (no event), then lets them go on; a stop some thread reached meanwhile is reported then.
  virtual std::future<Result<void>> whileStopped(std::function<Result<void>()> work) = 0;

  virtual pid_t pid() const = 0;  // 0 when no process
};

// Where an inserted int3 hides a byte: (address, original byte), (address, -1) when the site
// is gone, (0, -2) when every site is gone (a new process, an exec, a detach).
using SiteObserver = std::function<void(std::uint64_t address, int original)>;

// The engine in this process: one thread that makes every ptrace/waitpid call.
class Engine final : public EngineApi {
 public:
  explicit Engine(EventSink& sink);
  ~Engine() override;  // stop()
  void stop() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  std::future<Result<pid_t>> launch(LaunchOptions options) override;
  std::future<Result<void>> attach(pid_t pid) override;
  std::future<Result<void>> detach() override;
  std::future<Result<void>> kill() override;
  std::future<Result<void>> resume() override;
  std::future<Result<void>> pause() override;
  std::future<Result<void>> stepInstruction(pid_t tid) override;
  std::future<Result<void>> stepOut(pid_t tid, std::optional<ReturnTarget> target = {}) override;
  std::future<Result<void>> stepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls) override;
  std::future<Result<BreakpointId>> addBreakpoint(std::uint64_t address, StopPredicate condition = {},
                                                  HitRule rule = {}) override;
  std::future<Result<void>> removeBreakpoint(BreakpointId id) override;
  std::future<Result<void>> enableBreakpoint(BreakpointId id, bool enabled) override;
  std::future<Result<int>> addWatchpoint(std::uint64_t address, int size, WatchKind kind) override;
  std::future<Result<void>> removeWatchpoint(int slot) override;
  std::future<Result<ThreadRegisters>> registers(pid_t tid) override;
  std::future<Result<void>> setRegisters(const ThreadRegisters& registers) override;
  std::future<Result<std::vector<ThreadEntry>>> threads() override;
  std::future<Result<std::vector<LoadedObject>>> loadedObjects() override;
  std::future<Result<StepOverCounts>> stepOverCounts() override;
  MemoryAccess& memory() override;
  std::future<Result<void>> runOnEngineThread(std::function<Result<void>()> work) override;
  std::future<Result<void>> whileStopped(std::function<Result<void>()> work) override;
  pid_t pid() const override;

  // Told on the engine thread of every int3 inserted or taken out (the engine server keeps its
  // client's copy of the table, so reads made there hide them too). Set before any process.
  void observeSites(SiteObserver observer);
  // Call on the engine thread. While no program runs (stopped, or none), the engine thread waits
  // on `fd` too and calls `handler` there when it is readable (or hung up): a client's request
  // is then served without waking the engine through its doorbell. Returns an eventfd written
  // each time the engine thread goes into waitpid (a program runs: only the doorbell, posting
  // work, reaches it then), for whoever watches `fd` meanwhile (inWaitpid()).
  int serveWhileStopped(int fd, std::function<void()> handler);
  bool inWaitpid() const;
  // Whether the process was launched (not attached to); engine thread only.
  bool launchedProcess() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::native::engine
