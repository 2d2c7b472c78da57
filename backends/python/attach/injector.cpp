// The pending-call injection: every thread stopped, one page mapped by an injected mmap system
// call, the bootstrap copied there and queued for PyRun_SimpleString, every thread released.
#include "backends/python/attach/injector.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "strata/hex.hpp"
#include "strata/proc_maps.hpp"

namespace strata::python::attach {

namespace {

std::set<pid_t> tasks(pid_t pid) {
  std::set<pid_t> out;
  if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent* e = readdir(d))
      if (pid_t t = static_cast<pid_t>(std::atoi(e->d_name)); t > 0) out.insert(t);
    closedir(d);
  }
  return out;
}

// The threads this injection holds, each released (with the signal it was stopped by, if any)
// however the injection ends.
class Stopped {
 public:
  explicit Stopped(pid_t pid) : pid_(pid) {}
  ~Stopped() {
    for (auto [tid, sig] : held_) ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(sig)));
  }

  Result<void> stopAll() {
    // Threads may start while we seize: list again until no new one shows up.
    for (int round = 0; round < 16; ++round) {
      bool fresh = false;
      for (pid_t tid : tasks(pid_)) {
        if (held_.count(tid)) continue;
        fresh = true;
        if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
          if (errno == ESRCH) continue;
          return errnoError(errors::kSystemCallFailed, "PTRACE_SEIZE thread " + std::to_string(tid));
        }
        held_[tid] = 0;
        if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) continue;
        int status = 0;
        if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
          held_.erase(tid);
          continue;
        }
        // A signal that arrived first is handed back at detach; an interrupt or group stop is ours.
        if ((status >> 16) != PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP) held_[tid] = WSTOPSIG(status);
      }
      if (!fresh) return {};
    }
    return Error{errors::kSystemCallFailed, "process " + std::to_string(pid_) + " keeps starting threads"};
  }

  bool holds(pid_t tid) const { return held_.count(tid) != 0; }
  void keepSignal(pid_t tid, int sig) { held_[tid] = sig; }

 private:
  pid_t pid_;
  std::map<pid_t, int> held_;
};

struct Memory {
  pid_t pid;
  bool read(std::uint64_t address, void* buffer, std::size_t size) {
    iovec local{buffer, size}, remote{reinterpret_cast<void*>(address), size};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
  }
  bool write(std::uint64_t address, const void* buffer, std::size_t size) {
    iovec local{const_cast<void*>(buffer), size}, remote{reinterpret_cast<void*>(address), size};
    return process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
  }
  template <class T>
  bool get(std::uint64_t address, T& v) { return read(address, &v, sizeof v); }
  template <class T>
  bool put(std::uint64_t address, T v) { return write(address, &v, sizeof v); }
};

// A `syscall` instruction (0f 05) in an executable mapping of the process.
std::uint64_t findSyscallInstruction(pid_t pid, Memory& mem) {
  auto maps = readMappings(pid);
  if (!maps) return 0;
  for (const auto& m : *maps) {
    if (!m.executable() || m.path == "[vsyscall]") continue;
    std::vector<unsigned char> bytes(std::min<std::uint64_t>(m.end - m.start, 1 << 20));
    if (!mem.read(m.start, bytes.data(), bytes.size())) continue;
    for (std::size_t i = 0; i + 1 < bytes.size(); ++i)
      if (bytes[i] == 0x0f && bytes[i + 1] == 0x05) return m.start + i;
  }
  return 0;
}

// Runs mmap(0, size, RW, PRIVATE|ANONYMOUS) in stopped thread `tid`; its registers are put back
// as they were (an interrupted system call restarts when the thread resumes).
Result<std::uint64_t> remoteMmap(Stopped& held, pid_t tid, std::uint64_t syscallAt, std::size_t size) {
  user_regs_struct saved{};
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &saved) != 0) return errnoError(errors::kSystemCallFailed, "PTRACE_GETREGS");
  user_regs_struct r = saved;
  r.rip = syscallAt;
  r.rax = 9;  // SYS_mmap on x86-64
  r.orig_rax = ~0ULL;  // no system call to restart while ours runs
  r.rdi = 0;
  r.rsi = size;
  r.rdx = PROT_READ | PROT_WRITE;
  r.r10 = MAP_PRIVATE | MAP_ANONYMOUS;
  r.r8 = ~0ULL;
  r.r9 = 0;
  std::uint64_t result = 0;
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (ptrace(PTRACE_SETREGS, tid, nullptr, &r) != 0) return errnoError(errors::kSystemCallFailed, "PTRACE_SETREGS");
    if (ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr) != 0) {
      (void)ptrace(PTRACE_SETREGS, tid, nullptr, &saved);
      return errnoError(errors::kSystemCallFailed, "PTRACE_SINGLESTEP");
    }
    int status = 0;
    if (waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status))
      return Error{errors::kSystemCallFailed, "thread " + std::to_string(tid) + " ended during the injected mmap"};
    user_regs_struct after{};
    (void)ptrace(PTRACE_GETREGS, tid, nullptr, &after);
    if (WSTOPSIG(status) == SIGTRAP && after.rip == syscallAt + 2) {
      result = after.rax;
      break;
    }
    // A signal came first: the program gets it at detach, and the call is tried again.
    if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP) held.keepSignal(tid, WSTOPSIG(status));
  }
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &saved) != 0) return errnoError(errors::kSystemCallFailed, "PTRACE_SETREGS (restore)");
  if (!result || result > ~0xfffULL)
    return Error{errors::kSystemCallFailed, "the injected mmap failed" +
                                                (result > ~0xfffULL ? ": " + std::string(std::strerror(static_cast<int>(-result))) : "")};
  return result;
}

// 3.10 to 3.12: a ring (first, last) under a PyThread_type_lock, `calls_to_do` and an
// interpreter-wide eval breaker; 3.13: a count under a PyMutex, flags per call, breakers per
// thread state.
bool lockedRing(const PendingLayout& P) { return P.minor <= 12; }

// 3.10/3.11 have one queue, the interpreter's, which only the main thread runs; 3.12+ have the
// main thread's (in _PyRuntime) too.
std::vector<std::uint64_t> queuesOf(remote::PyRemote& remote, const PendingLayout& P, std::uint64_t interp) {
  std::vector<std::uint64_t> out;
  if (P.runtimePendingMain != kAbsent) out.push_back(remote.runtimeAddress() + P.runtimePendingMain);
  out.push_back(interp + P.interpPending);
  return out;
}

// The slots of a queue that hold calls not yet popped: (first .. last) on 3.10-3.12, npending
// from first on 3.13.
std::vector<std::uint64_t> queuedSlots(Memory& mem, const PendingLayout& P, std::uint64_t queue) {
  std::vector<std::uint64_t> out;
  int first = 0, last = 0;
  std::int32_t npending = 0;
  if (!mem.get(queue + P.first, first) || !mem.get(queue + P.last, last)) return out;
  int count = static_cast<int>(P.callCount);
  if (lockedRing(P)) npending = ((last - first) % count + count) % count;
  else if (!mem.get(queue + P.npending, npending)) return out;
  for (int k = 0; k < npending && k < count; ++k)
    out.push_back(queue + P.calls + static_cast<std::uint64_t>((first + k) % count) * P.callSize);
  return out;
}

// A queue whose lock a stopped thread holds, or that is full, is left alone.
Result<bool> queueBusy(Memory& mem, const PendingLayout& P, std::uint64_t queue) {
  int first = 0, last = 0;
  if (!mem.get(queue + P.first, first) || !mem.get(queue + P.last, last))
    return errnoError(errors::kPythonMemory, "read a pending-call queue");
  if (lockedRing(P)) {
    std::uint64_t lock = 0;
    std::uint32_t value = 0;
    if (!mem.get(queue + P.lock, lock)) return errnoError(errors::kPythonMemory, "read a pending-call lock");
    // PyThread_type_lock is a pointer to a heap glibc sem_t on Linux (3.10 to 3.12): its count
    // is 1 when free.
    if (lock && (!mem.get(lock, value) || value == 0)) return true;
    return (last + 1) % static_cast<int>(P.callCount) == first;
  }
  unsigned char mutex = 0;
  std::int32_t npending = 0, max = 0;
  if (!mem.get(queue + P.mutex, mutex) || !mem.get(queue + P.npending, npending) || !mem.get(queue + P.max, max))
    return errnoError(errors::kPythonMemory, "read a pending-call queue");
  return (mutex & 1) != 0 || npending >= max;
}

// func(arg) at the queue's end, counted as to do.
bool pushCall(Memory& mem, const PendingLayout& P, std::uint64_t queue, bool mainOnly, std::uint64_t func,
              std::uint64_t arg) {
  int last = 0;
  if (!mem.get(queue + P.last, last)) return false;
  std::uint64_t slot = queue + P.calls + static_cast<std::uint64_t>(last) * P.callSize;
  bool ok = mem.put<std::uint64_t>(slot, func) && mem.put<std::uint64_t>(slot + 8, arg);
  if (!lockedRing(P)) ok = ok && mem.put<std::int32_t>(slot + P.callFlags, mainOnly ? 1 : 0);  // never _Py_PENDING_RAWFREE
  ok = ok && mem.put<std::int32_t>(queue + P.last, (last + 1) % static_cast<int>(P.callCount));
  if (lockedRing(P)) return ok && mem.put<std::int32_t>(queue + P.callsToDo, 1);
  std::int32_t npending = 0;
  return ok && mem.get(queue + P.npending, npending) && mem.put<std::int32_t>(queue + P.npending, npending + 1);
}

// Asks the eval loop to run pending calls: the interpreter-wide breaker up to 3.12 (3.10/3.11:
// a thread other than the main one that sees it set recomputes it without the calls, and the
// main thread sets it again when it takes the GIL), 3.13's per thread.
bool signalCalls(Memory& mem, const PendingLayout& P, std::uint64_t interp, const std::vector<std::uint64_t>& states) {
  if (lockedRing(P)) {
    std::int32_t breaker = 0;
    return mem.get(interp + P.interpEvalBreaker, breaker) && mem.put<std::int32_t>(interp + P.interpEvalBreaker, breaker | 1);
  }
  for (std::uint64_t ts : states) {
    std::uint64_t breaker = 0;
    if (!mem.get(ts + P.tstateEvalBreaker, breaker) || !mem.put<std::uint64_t>(ts + P.tstateEvalBreaker, breaker | P.callsToDoBit))
      return false;
  }
  return true;
}

const PendingLayout* pendingLayoutFor(const remote::PyLayout& L) {
  const PendingLayout* same = nullptr;
  for (const auto& p : builtPendingLayouts()) {
    if (p.minor != L.minor) continue;
    if (p.versionHex == L.versionHex) return &p;
    same = &p;
  }
  return same;
}

}  // namespace

Result<QueuedBootstrap> queueBootstrap(remote::PyRemote& remote, const std::vector<std::uint64_t>& threadStates,
                                       const std::string& code) {
  const remote::PyLayout& L = remote.layout();
  const PendingLayout* P = pendingLayoutFor(L);
  if (!P) {
    std::string built;
    for (const auto& p : builtPendingLayouts()) built += (built.empty() ? "3." : ", 3.") + std::to_string(p.minor);
    return Error{errors::kPythonLayout, "Strata has no pending-call table for CPython " + remote.version() +
                                            " (built for: " + (built.empty() ? "none" : built) + ")"};
  }
  std::uint64_t run = remote.symbolAddress("PyRun_SimpleString");
  if (!run) return Error{errors::kPythonLayout, "the process's CPython exports no PyRun_SimpleString"};
  auto interp = remote.mainInterpreter();
  if (!interp) return interp.takeError();
  pid_t pid = remote.pid();
  Memory mem{pid};
  // 3.12+: the main thread's queue, then the interpreter's; 3.10/3.11: the interpreter's alone.
  std::vector<std::uint64_t> queues = queuesOf(remote, *P, *interp);

  Stopped held(pid);
  if (auto r = held.stopAll(); !r) return r.takeError();

  auto busy = [&](std::uint64_t queue) { return queueBusy(mem, *P, queue); };
  for (std::uint64_t q : queues) {
    auto b = busy(q);
    if (!b) return b.takeError();
    if (*b) return QueuedBootstrap{true, {}, false};
  }

  std::uint64_t syscallAt = findSyscallInstruction(pid, mem);
  if (!syscallAt) return Error{errors::kSystemCallFailed, "no syscall instruction found in process " + std::to_string(pid)};
  pid_t runner = held.holds(pid) ? pid : 0;
  if (!runner) return Error{errors::kSystemCallFailed, "the main thread of process " + std::to_string(pid) + " could not be stopped"};
  // One copy per queue, so that a copy still queued can be cancelled while the other runs.
  std::size_t stride = (code.size() + 16) & ~std::size_t{15};
  std::size_t size = (queues.size() * stride + 4095) & ~std::size_t{4095};
  auto page = remoteMmap(held, runner, syscallAt, size);
  if (!page) return page.takeError();
  QueuedBootstrap out;
  for (std::size_t i = 0; i < queues.size(); ++i) out.copies.push_back(*page + i * stride);
  for (std::uint64_t copy : out.copies)
    if (!mem.write(copy, code.c_str(), code.size() + 1)) return errnoError(errors::kPythonMemory, "write the bootstrap");

  // 3.13's main-thread queue takes calls flagged for the main thread.
  for (std::size_t i = 0; i < queues.size(); ++i)
    if (!pushCall(mem, *P, queues[i], queues.size() > 1 && i == 0, run, out.copies[i]))
      return errnoError(errors::kPythonMemory, "write a pending-call queue");

  // The eval loop looks at its breaker between instructions: ask it to run pending calls.
  std::vector<std::uint64_t> states = threadStates;
  std::uint64_t mainState = 0;
  if (!lockedRing(*P) && mem.get(remote.runtimeAddress() + P->runtimeMainTstate, mainState) && mainState)
    states.push_back(mainState);
  if (!signalCalls(mem, *P, *interp, states)) return errnoError(errors::kPythonMemory, "write the eval breaker");
  return out;
}

Result<bool> queuePendingCall(remote::PyRemote& remote, std::uint64_t func, std::uint64_t arg, std::uint64_t threadState) {
  const PendingLayout* P = pendingLayoutFor(remote.layout());
  if (!P) return Error{errors::kPythonLayout, "Strata has no pending-call table for CPython " + remote.version()};
  // The call is for whichever thread runs next; 3.10/3.11 run pending calls on the main thread
  // alone.
  if (P->runtimePendingMain == kAbsent)
    return Error{errors::kPythonLayout, "CPython " + remote.version() + " runs pending calls on its main thread alone"};
  auto interp = remote.mainInterpreter();
  if (!interp) return interp.takeError();
  Memory mem{remote.pid()};
  std::uint64_t queue = *interp + P->interpPending;
  auto busy = queueBusy(mem, *P, queue);
  if (!busy) return busy.takeError();
  if (*busy) return false;
  if (!pushCall(mem, *P, queue, false, func, arg) || !signalCalls(mem, *P, *interp, {threadState}))
    return errnoError(errors::kPythonMemory, "write a pending call");
  return true;
}

Result<int> cancelBootstrap(remote::PyRemote& remote, const QueuedBootstrap& queued) {
  const PendingLayout* P = pendingLayoutFor(remote.layout());
  auto interp = remote.mainInterpreter();
  if (!P || !interp || queued.copies.empty()) return 0;
  Memory mem{remote.pid()};
  Stopped held(remote.pid());
  if (auto r = held.stopAll(); !r) return r.takeError();
  int cancelled = 0;
  static const char kNothing[] = "pass\n";
  for (std::uint64_t queue : queuesOf(remote, *P, *interp))
    for (std::uint64_t slot : queuedSlots(mem, *P, queue)) {
      std::uint64_t arg = 0;
      if (!mem.get(slot + 8, arg)) continue;
      for (std::uint64_t copy : queued.copies)
        if (arg == copy && mem.write(copy, kNothing, sizeof kNothing)) ++cancelled;
    }
  return cancelled;
}

// PEP 768's protocol, as sys.remote_exec speaks it, written with every thread stopped so that
// no eval breaker changes between our read and our write.
Result<QueuedBootstrap> requestRemoteExec(remote::PyRemote& remote, const std::vector<std::uint64_t>& threadStates,
                                          const std::string& scriptPath) {
  const remote::PyLayout& L = remote.layout();
  if (L.debuggerPendingCall == kAbsent || L.tstateRemoteDebugger == kAbsent || L.tstateEvalBreaker == kAbsent)
    return Error{errors::kPythonLayout, "CPython " + remote.version() + " has no remote-debugging interface (PEP 768 is 3.14+)"};
  if (scriptPath.size() + 1 > L.debuggerScriptPathSize)
    return Error{errors::kPythonLayout, "the bootstrap's path is longer than the " + std::to_string(L.debuggerScriptPathSize) +
                                            " bytes CPython keeps for it: " + scriptPath};
  auto interp = remote.mainInterpreter();
  if (!interp) return interp.takeError();
  pid_t pid = remote.pid();
  Memory mem{pid};
  std::int32_t enabled = 0;
  if (!mem.get(*interp + L.interpRemoteDebugEnabled, enabled))
    return errnoError(errors::kPythonMemory, "read the interpreter's remote_debug setting");
  if (enabled != 1) {
    QueuedBootstrap off;
    off.disabled = true;
    return off;
  }
  Stopped held(pid);
  if (auto r = held.stopAll(); !r) return r.takeError();
  // Another debugger's request still waiting on a thread: leave it to run first.
  for (std::uint64_t ts : threadStates) {
    std::int32_t pending = 0;
    if (!mem.get(ts + L.tstateRemoteDebugger + L.debuggerPendingCall, pending))
      return errnoError(errors::kPythonMemory, "read a thread's remote-debugger request");
    if (pending != 0) return QueuedBootstrap{true, {}, false};
  }
  QueuedBootstrap out;
  for (std::uint64_t ts : threadStates) {
    std::uint64_t support = ts + L.tstateRemoteDebugger;
    std::uint64_t breaker = 0;
    bool ok = mem.write(support + L.debuggerScriptPath, scriptPath.c_str(), scriptPath.size() + 1) &&
              mem.put<std::int32_t>(support + L.debuggerPendingCall, 1) && mem.get(ts + L.tstateEvalBreaker, breaker) &&
              mem.put<std::uint64_t>(ts + L.tstateEvalBreaker, breaker | kEvalPleaseStopBit);
    if (!ok) return errnoError(errors::kPythonMemory, "write a thread's remote-debugger request");
    out.copies.push_back(ts);
  }
  return out;
}

Result<int> cancelRemoteExec(remote::PyRemote& remote, const QueuedBootstrap& queued) {
  const remote::PyLayout& L = remote.layout();
  if (queued.copies.empty() || L.debuggerPendingCall == kAbsent) return 0;
  Memory mem{remote.pid()};
  Stopped held(remote.pid());
  if (auto r = held.stopAll(); !r) return r.takeError();
  int cancelled = 0;
  for (std::uint64_t ts : queued.copies) {
    std::uint64_t at = ts + L.tstateRemoteDebugger + L.debuggerPendingCall;
    std::int32_t pending = 0;
    // A thread that ended freed its state: a read that fails is nothing left to cancel.
    if (mem.get(at, pending) && pending == 1 && mem.put<std::int32_t>(at, 0)) ++cancelled;
  }
  return cancelled;
}

}  // namespace strata::python::attach
