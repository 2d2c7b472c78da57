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
};

struct LaunchOptions {
  std::string program;                // path, or a name looked up in PATH
  std::vector<std::string> args;      // argv[1..]
  std::string cwd;                    // empty: the engine's
  std::optional<std::vector<std::string>> env;  // "K=V"; absent: inherit
  int stdinFd = -1;                   // -1: /dev/null
  int stdoutFd = -1;                  // -1: inherit
  int stderrFd = -1;                  // -1: inherit
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

// Thread-safe: any thread may call any method. Never destroy an Engine from its own callbacks.
class Engine {
 public:
  explicit Engine(EventSink& sink);
  ~Engine();  // stop()
  // Runs the work already queued, then kills a launched process or detaches an attached one and
  // ends the engine thread. Calls made afterwards are never answered (their futures break).
  void stop();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Process stopped at entry (onStopped(Entry) follows); returns its pid.
  std::future<Result<pid_t>> launch(LaunchOptions options);
  // Every thread seized and stopped (onStopped(Attach) follows).
  std::future<Result<void>> attach(pid_t pid);
  std::future<Result<void>> detach();
  std::future<Result<void>> kill();

  // Resumes every thread; a stop another thread reached meanwhile is reported first instead.
  std::future<Result<void>> resume();
  // Stops every thread (onStopped(Pause)); a no-op when already stopped.
  std::future<Result<void>> pause();
  // One instruction of `tid` while the other threads stay stopped (onStopped(Step)).
  std::future<Result<void>> stepInstruction(pid_t tid);
  // Without a target: return address and stack from the frame pointer (rbp), or from the stack
  // pointer when the thread is at the first instruction of a function.
  std::future<Result<void>> stepOut(pid_t tid, std::optional<ReturnTarget> target = {});
  // Single-steps `tid` inside the engine while its pc stays in [low, high) (the addresses of a
  // source line), then reports a Step stop: one request per line step, not one per
  // instruction. With overCalls, a call made from the range runs at full speed (all threads)
  // until it returns to the range, recursion included.
  std::future<Result<void>> stepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls);

  std::future<Result<BreakpointId>> addBreakpoint(std::uint64_t address, StopPredicate condition = {});
  std::future<Result<void>> removeBreakpoint(BreakpointId id);
  std::future<Result<void>> enableBreakpoint(BreakpointId id, bool enabled);

  // Returns the debug register slot (0..3). The address must be aligned to the size.
  std::future<Result<int>> addWatchpoint(std::uint64_t address, int size, WatchKind kind);
  std::future<Result<void>> removeWatchpoint(int slot);

  std::future<Result<ThreadRegisters>> registers(pid_t tid);
  std::future<Result<void>> setRegisters(const ThreadRegisters& registers);
  std::future<Result<std::vector<ThreadEntry>>> threads();
  std::future<Result<std::vector<LoadedObject>>> loadedObjects();
  std::future<Result<StepOverCounts>> stepOverCounts();

  // Memory of the current process through the engine thread; reads hide inserted int3 bytes.
  MemoryAccess& memory();

  // Runs `work` on the engine thread (for code that must call ptrace itself, e.g. an unwinder).
  std::future<Result<void>> runOnEngineThread(std::function<Result<void>()> work);
  // Runs `work` on the engine thread with every thread of a running process stopped for it
  // (no event), then lets them go on; a stop some thread reached meanwhile is reported then.
  std::future<Result<void>> whileStopped(std::function<Result<void>()> work);

  pid_t pid() const;  // 0 when no process

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::native::engine
