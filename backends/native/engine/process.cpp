// Running a traced process: waitpid events, all-stop, resume with step-over, detach and kill
// (its threads' registers and list: registers.cpp).
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cstdlib>
#include <fstream>

#include "engine_impl.hpp"

namespace strata::native::engine {

namespace {

ExitEvent exitEventFor(pid_t pid, int status) {
  ExitEvent ev;
  ev.pid = pid;
  if (WIFSIGNALED(status)) {
    ev.signaled = true;
    ev.signal = WTERMSIG(status);
    ev.description = "killed by " + signalName(ev.signal);
  } else {
    ev.exitCode = WEXITSTATUS(status);
    ev.description = "exited with code " + std::to_string(ev.exitCode);
  }
  return ev;
}

}  // namespace

Thread* Engine::Impl::findThread(pid_t tid) {
  if (!proc) return nullptr;
  auto it = proc->threads.find(tid);
  return it == proc->threads.end() ? nullptr : &it->second;
}

Result<void> Engine::Impl::requireStopped() const {
  if (!proc) return Error{errors::kNoProcess, "no process is being debugged", true};
  if (proc->running && quiesced == 0) return Error{errors::kProcessRunning, "the process is running; pause it first", true};
  return {};
}

Result<user_regs_struct*> Engine::Impl::regs(Thread& thread) {
  if (!thread.regsValid) {
    if (ptrace(PTRACE_GETREGS, thread.tid, nullptr, &thread.regs) != 0)
      return errnoError(errors::kPtraceFailed, "PTRACE_GETREGS thread " + std::to_string(thread.tid));
    thread.regsValid = true;
  }
  return &thread.regs;
}

// Register changes made by the engine itself (rewinding onto a breakpoint, an emulated
// instruction) stay in the cache until the thread runs or anyone else may look: a hit
// resumed inside the engine then costs one PTRACE_SETREGS, not two.
Result<void> Engine::Impl::setPc(Thread& thread, std::uint64_t pc) {
  auto r = regs(thread);
  if (!r) return r.takeError();
  thread.regs.rip = pc;
  thread.regsDirty = true;
  return {};
}

Result<void> Engine::Impl::flushRegs(Thread& thread) {
  if (!thread.regsDirty) return {};
  thread.regsDirty = false;
  if (ptrace(PTRACE_SETREGS, thread.tid, nullptr, &thread.regs) != 0) {
    thread.regsValid = false;
    return errnoError(errors::kPtraceFailed, "PTRACE_SETREGS thread " + std::to_string(thread.tid));
  }
  return {};
}

void Engine::Impl::flushAllRegs() {
  if (!proc) return;
  for (auto& [tid, t] : proc->threads) (void)flushRegs(t);
}

void Engine::Impl::queueStop(Thread& thread, EngineStop event) {
  event.tid = thread.tid;
  thread.pending = std::move(event);
  thread.pendingSeq = ++proc->stopSeq;
}

Result<void> Engine::Impl::continueThread(Thread& thread, int signal) {
  if (auto r = flushRegs(thread); !r) return r;
  thread.regsValid = false;
  thread.atSite = 0;
  thread.injectSignal = 0;
  if (ptrace(PTRACE_CONT, thread.tid, nullptr, signal) != 0) {
    if (errno == ESRCH) {  // killed meanwhile; its exit report is on the way
      thread.stopped = false;
      return {};
    }
    return errnoError(errors::kPtraceFailed, "PTRACE_CONT thread " + std::to_string(thread.tid));
  }
  thread.stopped = false;
  return {};
}

void Engine::Impl::reportExit(pid_t pid, int status) {
  ExitEvent ev = exitEventFor(pid, status);
  if (proc) {
    if (proc->memFd >= 0) close(proc->memFd);
    proc.reset();
  }
  currentPid = 0;
  sink.onExited(ev);
}

Outcome Engine::Impl::handleWait(pid_t tid, int status) {
  if (!findThread(tid)) {
    if (detachedChildren.count(tid) && (WIFEXITED(status) || WIFSIGNALED(status))) {
      detachedChildren.erase(tid);
      sink.onExited(exitEventFor(tid, status));
      return Outcome::Gone;
    }
    if (!proc || !WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP) return Outcome::Gone;
    if (!isOurThread(proc->pid, tid)) {  // a forked child, ahead of its parent's fork event
      forkedChildren.insert(tid);
      return Outcome::Gone;
    }
    // A new thread's first stop can arrive before its parent's clone event.
    Thread& t = proc->threads[tid];
    t.tid = tid;
    t.awaitingFirstStop = true;
    sink.onThreadStarted(proc->pid, tid);
  }
  return processEvent(tid, status);
}

Outcome Engine::Impl::processEvent(pid_t tid, int status) {
  Thread& t = proc->threads[tid];
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    pid_t pid = proc->pid;
    proc->threads.erase(tid);
    if (tid == pid) proc->leaderStatus = status;
    else sink.onThreadExited(pid, tid);
    if (proc->exitedThreads.size() > 64) proc->exitedThreads.clear();  // only recent ones matter
    proc->exitedThreads.insert(tid);
    // The process is over when its last thread is; the leader's status is its exit status.
    if (proc->threads.empty()) reportExit(pid, proc->leaderStatus >= 0 ? proc->leaderStatus : status);
    return Outcome::Gone;
  }
  if (!WIFSTOPPED(status)) return Outcome::Handled;
  t.stopped = true;
  t.regsValid = false;
  // The kernel drops a pending PTRACE_INTERRUPT at any trap, so whatever stopped the thread
  // answered our interrupt too. (An interrupt sent to an already stopped, unreaped thread
  // does come later, as a stray PTRACE_EVENT_STOP, which is harmless.)
  t.interruptPending = false;
  int sig = WSTOPSIG(status);
  int event = status >> 16;

  switch (event) {
    case PTRACE_EVENT_STOP:
      if (t.awaitingFirstStop) {
        t.awaitingFirstStop = false;
        (void)applyDebugRegisters(tid);  // watchpoints hold on every thread, new ones too
      }
      // An interrupt we asked for, or a stray one, or a group-stop: none stops the program.
      return Outcome::Handled;
    case PTRACE_EVENT_CLONE: {
      unsigned long msg = 0;
      if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0) return Outcome::Handled;
      auto child = static_cast<pid_t>(msg);
      // The child may have stopped, run and exited before this event reached us.
      if (proc->exitedThreads.erase(child) || proc->threads.count(child)) return Outcome::Handled;
      Thread& c = proc->threads[child];
      c.tid = child;
      c.awaitingFirstStop = true;
      sink.onThreadStarted(proc->pid, child);
      return Outcome::Handled;
    }
    case PTRACE_EVENT_EXIT:
      t.exiting = true;
      return Outcome::Handled;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK: {
      unsigned long child = 0;
      if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child) == 0) releaseFork(static_cast<pid_t>(child), event == PTRACE_EVENT_FORK);
      return Outcome::Handled;
    }
    case PTRACE_EVENT_EXEC: {
      // The image is gone with every breakpoint in it; only the leader remains.
      pid_t pid = proc->pid;
      auto old = std::move(*proc);
      proc.emplace();
      siteChanged(0, -2);
      proc->pid = pid;
      proc->launched = old.launched;
      proc->running = old.running;
      if (old.memFd >= 0) close(old.memFd);
      Thread& leader = proc->threads[pid];
      leader.tid = pid;
      leader.stopped = true;
      (void)openMemory();
      (void)initRendezvousAtExec();
      if (!proc) return Outcome::Gone;
      queueStop(proc->threads[pid], stopOf(EngineStopReason::Exec));
      return Outcome::Report;
    }
    default:
      break;
  }
  if (event != 0) return Outcome::Handled;

  if (sig == SIGTRAP) {
    siginfo_t info{};
    if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) != 0) return Outcome::Handled;
    if (info.si_code == SI_KERNEL || info.si_code == TRAP_BRKPT) return onTrap(t);
    if (info.si_code == TRAP_TRACE || info.si_code == TRAP_HWBKPT) {
      if (onWatchTrap(t)) return Outcome::Report;
      return info.si_code == TRAP_TRACE ? Outcome::Trap : Outcome::Handled;
    }
    t.injectSignal = SIGTRAP;  // sent by someone (kill, raise): the program's own business
    return Outcome::Handled;
  }
  if (sig == SIGSTOP) return Outcome::Handled;  // never ours to deliver
  if (isFaultSignal(sig)) {
    siginfo_t info{};
    EngineStop ev = stopOf(EngineStopReason::Exception);
    ev.signal.signo = sig;
    if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &info) == 0) {
      ev.signal.code = info.si_code;
      ev.signal.faultAddress = reinterpret_cast<std::uint64_t>(info.si_addr);
    }
    ev.signal.description = describeSignal(sig, ev.signal.code, ev.signal.faultAddress);
    t.injectSignal = sig;  // resuming lets the program meet its fate, as without a debugger
    queueStop(t, std::move(ev));
    return Outcome::Report;
  }
  t.injectSignal = sig;
  sink.onSignal(proc->pid, tid, sig);
  return Outcome::Handled;
}

bool Engine::Impl::isOurThread(pid_t pid, pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Tgid:", 0) == 0) return std::atoi(line.c_str() + 5) == pid;
  return true;
}

// A fork child starts with a copy of our int3 bytes; it would die on the first one. Put the
// original bytes back in its copy and let it go. (A vfork child shares the parent's memory, so
// its copy cannot be cleaned; it normally just calls exec.)
void Engine::Impl::releaseFork(pid_t child, bool copiedMemory) {
  if (!forkedChildren.erase(child)) {
    int status = 0;
    while (waitpid(child, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
  if (copiedMemory) {
    int fd = open(("/proc/" + std::to_string(child) + "/mem").c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      for (auto& [address, site] : proc->sites)
        if (site.inserted) (void)!pwrite(fd, &site.original, 1, static_cast<off_t>(address));
      close(fd);
    }
  }
  (void)ptrace(PTRACE_DETACH, child, nullptr, 0);
}

void Engine::Impl::dispatch(pid_t tid, int status) {
  Outcome outcome = handleWait(tid, status);
  if (!proc) return;
  Thread* t = findThread(tid);
  if (proc->killing) {
    if (t && t->stopped) (void)continueThread(*t, 0);
    return;
  }
  if (!proc->running) return;  // stopped by the user: leave every thread where it is
  switch (outcome) {
    case Outcome::Gone:
      return;
    case Outcome::Handled:
    case Outcome::Trap:
      if (t && t->stopped) (void)continueThread(*t, t->injectSignal);
      return;
    case Outcome::Report:
      break;
    case Outcome::StepOver:
      // A breakpoint nobody stops at, on an instruction the engine can run itself: the int3
      // never leaves memory, so the other threads need not stop at all.
      if (t && t->atSite && !proc->rendezvousPending && !proc->pauseRequested && !proc->rangeResume) {
        auto site = proc->sites.find(t->atSite);
        if (site != proc->sites.end() && emulateAtSite(*t, site->second)) {
          t->atSite = 0;
          (void)continueThread(*t, t->injectSignal);
          return;
        }
      }
      break;
  }
  if (!stopAll() || !proc) return;
  (void)resumeAll();
}

Result<void> Engine::Impl::stopAll() {
  if (!proc) return {};
  for (auto& [tid, t] : proc->threads) {
    if (t.stopped || t.awaitingFirstStop || t.interruptPending || t.exiting) continue;
    if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
      if (errno == ESRCH) continue;  // exiting; its report will come
      return errnoError(errors::kPtraceFailed, "PTRACE_INTERRUPT thread " + std::to_string(tid));
    }
    t.interruptPending = true;
  }
  // A thread that continued from its exit stop will only report its death, which for the
  // leader waits for every other thread: such threads don't count as running.
  auto anyRunning = [this]() {
    if (!proc) return false;
    for (auto& [tid, t] : proc->threads)
      if (!t.stopped && !t.exiting) return true;
    return false;
  };
  while (anyRunning()) {
    int status = 0;
    pid_t p = waitpid(-1, &status, __WALL | WUNTRACED | __WNOTHREAD);
    if (p < 0) {
      if (errno == EINTR) continue;
      return errnoError(errors::kPtraceFailed, "waitpid while stopping every thread");
    }
    if (p == waker) {
      if (WIFSTOPPED(status)) ::kill(waker, SIGCONT);
      continue;
    }
    (void)handleWait(p, status);
  }
  return {};
}

void Engine::Impl::reportStop(Thread& thread) {
  EngineStop ev = std::move(*thread.pending);
  thread.pending.reset();
  proc->running = false;
  cancelStepOut();  // any stop ends a step-out or a range step, as in every debugger
  proc->range.reset();
  proc->rangeResume = false;
  ev.pid = proc->pid;
  ev.tid = thread.tid;
  flushAllRegs();  // the sink may hand threads to code that calls ptrace itself
  if (auto r = regs(thread)) ev.pc = (*r)->rip;
  ++quiesced;
  sink.onStopped(ev);
  --quiesced;
  if (proc && proc->resumeAfterCallback) {
    proc->resumeAfterCallback = false;
    (void)resumeAll();
  }
}

Result<void> Engine::Impl::resumeAll() {
  if (!proc) return Error{errors::kNoProcess, "no process is being debugged", true};
  if (proc->rendezvousPending) {
    // Libraries are reported while everything is stopped, before any of their code runs.
    proc->rendezvousPending = false;
    (void)onRendezvous();
    if (!proc) return {};
  }
  if (proc->pauseRequested && !proc->threads.empty()) {
    // pause() from a library callback or a condition: stop here instead of running on.
    proc->pauseRequested = false;
    Thread* at = findThread(proc->rendezvousTid);
    if (!at) at = &proc->threads.begin()->second;
    if (!at->pending) queueStop(*at, stopOf(EngineStopReason::Pause));
  }
  if (proc->rangeResume) {
    proc->rangeResume = false;
    cancelStepOut();
    if (proc->range) return continueRange();
  }
  // A stop another thread reached while the last one was reported comes first, unless what
  // caused it is gone (a breakpoint removed meanwhile: its thread just re-runs the original
  // instruction, its pc already points at it).
  for (;;) {
    Thread* first = nullptr;
    for (auto& [tid, t] : proc->threads)
      if (t.stopped && t.pending && (!first || t.pendingSeq < first->pendingSeq)) first = &t;
    if (!first) break;
    if (first->pending->reason == EngineStopReason::Breakpoint) {
      auto& ids = first->pending->breakpoints;
      std::erase_if(ids, [this](BreakpointId id) {
        auto it = proc->breakpoints.find(id);
        return it == proc->breakpoints.end() || !it->second.enabled;
      });
      if (ids.empty()) {
        first->pending.reset();
        continue;
      }
    }
    reportStop(*first);
    return {};
  }
  // By id: a step may end a thread (or start one), which edits the map.
  std::vector<pid_t> onSites;
  for (auto& [tid, t] : proc->threads)
    if (t.stopped && t.atSite) onSites.push_back(tid);
  for (pid_t tid : onSites) {
    Thread* tp = findThread(tid);
    if (!tp) continue;
    Thread& t = *tp;
    auto site = proc->sites.find(t.atSite);
    auto pc = regs(t);
    if (site == proc->sites.end() || !site->second.inserted || !pc || (*pc)->rip != t.atSite) {
      t.atSite = 0;
      continue;
    }
    auto stepped = stepOverSite(t);
    if (!stepped) return stepped.takeError();
    if (!proc) return {};
    if (*stepped == Outcome::Report) {
      if (Thread* s = findThread(tid); s && s->pending) reportStop(*s);
      return {};
    }
  }
  Result<void> result;
  for (auto& [tid, t] : proc->threads) {
    if (!t.stopped) continue;
    if (auto r = continueThread(t, t.injectSignal); !r && result) result = r;
  }
  proc->running = true;
  return result;
}

Result<Outcome> Engine::Impl::singleStep(Thread& thread) {
  pid_t tid = thread.tid;
  for (;;) {
    Thread* t = findThread(tid);
    if (!t) return Outcome::Gone;
    if (auto r = flushRegs(*t); !r) return r.takeError();
    t->regsValid = false;
    // A pending signal waits until the step is done: delivering it now would run its handler
    // with the breakpoint byte lifted.
    if (ptrace(PTRACE_SINGLESTEP, tid, nullptr, 0) != 0) {
      if (errno == ESRCH) return Outcome::Gone;
      return errnoError(errors::kPtraceFailed, "PTRACE_SINGLESTEP thread " + std::to_string(tid));
    }
    t->stopped = false;
    int status = 0;
    pid_t p;
    while ((p = waitpid(tid, &status, __WALL)) < 0 && errno == EINTR) {
    }
    if (p < 0) return errnoError(errors::kPtraceFailed, "waitpid thread " + std::to_string(tid));
    int held = t->injectSignal;
    Outcome outcome = handleWait(tid, status);
    if (!proc) return Outcome::Gone;
    t = findThread(tid);
    if (!t) return Outcome::Gone;
    if (outcome == Outcome::Trap || outcome == Outcome::Report) return outcome;
    if (outcome == Outcome::StepOver) return Outcome::Trap;
    if (outcome == Outcome::Gone) return outcome;
    if (t->exiting) return Outcome::Gone;
    // A second signal arriving mid-step replaces the held one; rare enough to accept.
    if (!t->injectSignal) t->injectSignal = held;
  }
}

Result<void> Engine::Impl::doStepInstruction(pid_t tid) {
  if (auto r = requireStopped(); !r) return r;
  Thread* t = findThread(tid);
  if (!t) return Error{errors::kNoSuchThread, "step: no thread " + std::to_string(tid), true};
  auto pc = regs(*t);
  if (!pc) return pc.takeError();
  auto site = proc->sites.find((*pc)->rip);
  Result<Outcome> outcome = (site != proc->sites.end() && site->second.inserted) ? stepOverSite(*t) : singleStep(*t);
  if (!outcome) return outcome.takeError();
  if (!proc) return {};
  t = findThread(tid);
  if (!t) return {};
  if (*outcome != Outcome::Report) queueStop(*t, stopOf(EngineStopReason::Step));
  reportStop(*t);
  return {};
}

Result<void> Engine::Impl::doPause() {
  if (!proc) return Error{errors::kNoProcess, "pause: no process is being debugged", true};
  if (quiesced > 0) {
    proc->pauseRequested = true;
    return {};
  }
  if (!proc->running) return {};
  if (auto r = stopAll(); !r) return r;
  if (!proc) return {};
  Thread* at = nullptr;
  for (auto& [tid, t] : proc->threads)
    if (t.pending && (!at || t.pendingSeq < at->pendingSeq)) at = &t;
  if (!at) {
    // The leader, unless it already left (pthread_exit in main): then any live thread.
    at = findThread(proc->pid);
    if (!at || at->exiting)
      for (auto& [tid, t] : proc->threads)
        if (t.stopped && !t.exiting) {
          at = &t;
          break;
        }
    if (!at) at = &proc->threads.begin()->second;
    queueStop(*at, stopOf(EngineStopReason::Pause));
  }
  if (proc->rendezvousPending) {
    proc->rendezvousPending = false;
    (void)onRendezvous();
    if (!proc) return {};
    proc->pauseRequested = false;
  }
  reportStop(*at);
  return {};
}

Result<void> Engine::Impl::doDetach() {
  if (!proc) return Error{errors::kNoProcess, "detach: no process is being debugged", true};
  if (proc->running) {
    if (auto r = stopAll(); !r) return r;
    if (!proc) return {};
  }
  Result<void> result = removeAllSites();
  for (auto& [tid, t] : proc->threads)
    if (t.stopped && !t.exiting) (void)clearDebugRegisters(tid);
  flushAllRegs();
  for (auto& [tid, t] : proc->threads) {
    // Signals the program was about to receive still reach it.
    if (ptrace(PTRACE_DETACH, tid, nullptr, t.injectSignal) != 0 && errno != ESRCH && result)
      result = errnoError(errors::kPtraceFailed, "PTRACE_DETACH thread " + std::to_string(tid));
  }
  if (proc->launched) detachedChildren.insert(proc->pid);
  if (proc->memFd >= 0) close(proc->memFd);
  proc.reset();
  currentPid = 0;
  return result;
}

Result<void> Engine::Impl::doKill() {
  if (!proc) return Error{errors::kNoProcess, "kill: no process is being debugged", true};
  pid_t pid = proc->pid;
  proc->killing = true;
  // The program's parent may be another part of the adapter (a Python launch the native
  // debugger took over at a crash): its waiter can reap the leader before this thread does,
  // and then no status ever comes here. A pidfd says when the process has ended, so the wait
  // below never outlives it.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  // ESRCH: already dead, only its reports are left to collect.
  if (::kill(pid, SIGKILL) != 0 && errno != ESRCH) {
    if (pidfd >= 0) close(pidfd);
    return errnoError(errors::kSignalFailed, "kill process " + std::to_string(pid));
  }
  for (auto& [tid, t] : proc->threads)
    if (t.stopped) (void)continueThread(t, 0);
  while (proc && proc->pid == pid) {
    int status = 0;
    pid_t p = waitpid(-1, &status, __WALL | WUNTRACED | __WNOTHREAD | (pidfd >= 0 ? WNOHANG : 0));
    if (p < 0) {
      if (errno == EINTR) continue;
      if (pidfd >= 0) close(pidfd);
      return errnoError(errors::kPtraceFailed, "waitpid for killed process " + std::to_string(pid));
    }
    if (p == 0) {
      pollfd ended{pidfd, POLLIN, 0};
      if (::poll(&ended, 1, 20) <= 0) continue;
      // Ended. Reaped by us (a status waits for waitpid) or by its parent elsewhere: then it is
      // no longer ours to wait for (ECHILD), and it died of the SIGKILL sent above.
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT | __WALL | __WNOTHREAD) == 0) continue;
      if (errno == ECHILD) reportExit(pid, proc->leaderStatus >= 0 ? proc->leaderStatus : SIGKILL);
      continue;
    }
    if (p == waker) {
      if (WIFSTOPPED(status)) ::kill(waker, SIGCONT);
      continue;
    }
    dispatch(p, status);
  }
  if (pidfd >= 0) close(pidfd);
  return {};
}

}  // namespace strata::native::engine
