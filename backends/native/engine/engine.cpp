// The engine thread: its command queue, its wake-up child and the public Engine methods.
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_impl.hpp"

namespace strata::native::engine {

const char* reasonName(EngineStopReason reason) {
  switch (reason) {
    case EngineStopReason::Entry: return "entry";
    case EngineStopReason::Attach: return "attach";
    case EngineStopReason::Breakpoint: return "breakpoint";
    case EngineStopReason::Step: return "step";
    case EngineStopReason::StepOut: return "step out";
    case EngineStopReason::Watchpoint: return "watchpoint";
    case EngineStopReason::Exception: return "exception";
    case EngineStopReason::Pause: return "pause";
    case EngineStopReason::Exec: return "exec";
  }
  return "unknown";
}

// The engine thread sleeps in waitpid(-1), which no file descriptor can interrupt. A tiny
// child of the engine thread serves as its doorbell: stopping it with SIGSTOP makes that
// waitpid return, with no signal handler in the adapter and no lost wake-up (a stop is
// queued in the kernel until reaped).
static Result<pid_t> forkWaker() {
  pid_t child = fork();
  if (child < 0) return errnoError(errors::kSystemCallFailed, "fork the engine's wake-up process");
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the engine thread
    close_range(3, ~0u, 0);            // holds no pipe of the adapter open
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (;;) pause();
  }
  return child;
}

void Engine::Impl::post(std::function<void()> task) {
  {
    std::lock_guard lock(queueMutex);
    queue.push_back(std::move(task));
  }
  if (wakeFd >= 0) {
    std::uint64_t one = 1;
    (void)!::write(wakeFd, &one, sizeof one);
  }
  if (waker > 0) ::kill(waker, SIGSTOP);
}

// Until the queue stays empty: a task that waits for the process (stopping every thread,
// killing it) reaps the doorbell's stop itself, so what was posted meanwhile rang a bell the
// loop never hears. Those tasks are taken here, not left to the next event from the program.
void Engine::Impl::drainQueue() {
  for (;;) {
    std::deque<std::function<void()>> work;
    {
      std::lock_guard lock(queueMutex);
      work.swap(queue);
    }
    if (work.empty()) return;
    for (auto& task : work) task();
  }
}

void Engine::Impl::loop() {
  for (;;) {
    drainQueue();
    if (quit) break;
    int status = 0;
    if (idleFd >= 0 && (!proc || !proc->running)) {
      // Stopped (or no process): nothing but an exit can come from the program, so the engine
      // thread also waits on its client's socket and answers at once, without a doorbell.
      inWaitpid = false;  // (while a program runs it stays set, from one waitpid to the next)
      pid_t p = waitpid(-1, &status, __WALL | WUNTRACED | __WNOTHREAD | WNOHANG);
      if (p < 0 && errno == EINTR) continue;
      if (p < 0) break;
      if (p == waker) {
        if (WIFSTOPPED(status)) ::kill(waker, SIGCONT);
        continue;
      }
      if (p > 0) {
        dispatch(p, status);
        continue;
      }
      pollfd fds[2] = {{idleFd, POLLIN, 0}, {wakeFd, POLLIN, 0}};
      // The timeout bounds how late the exit of a stopped program (SIGKILL) is seen.
      if (::poll(fds, 2, 100) > 0) {
        if (fds[1].revents & POLLIN) {
          std::uint64_t n = 0;
          (void)!::read(wakeFd, &n, sizeof n);
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) idleHandler();
      }
      continue;
    }
    // __WNOTHREAD: only this thread's children and tracees, never the adapter's other
    // children (they belong to whoever spawned them).
    if (idleFd >= 0 && !inWaitpid.exchange(true)) {
      std::uint64_t one = 1;
      (void)!::write(runningFd, &one, sizeof one);
    }
    pid_t p = waitpid(-1, &status, __WALL | WUNTRACED | __WNOTHREAD);
    if (p < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: the wake-up child is gone, nothing can reach this thread any more
    }
    if (p == waker) {
      if (WIFSTOPPED(status)) ::kill(waker, SIGCONT);
      continue;
    }
    dispatch(p, status);
  }
  if (proc) {
    if (proc->launched) (void)doKill();
    else (void)doDetach();
  }
  ::kill(waker, SIGKILL);
  int status = 0;
  while (waitpid(waker, &status, __WALL) < 0 && errno == EINTR) {
  }
}

Engine::Engine(EventSink& sink) : impl_(std::make_unique<Impl>(sink)) {
  impl_->wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::promise<Result<void>> ready;
  auto readyFuture = ready.get_future();
  impl_->worker = std::thread([this, &ready]() {
    impl_->workerId = std::this_thread::get_id();
    auto waker = forkWaker();
    if (!waker) {
      ready.set_value(waker.error());
      return;
    }
    impl_->waker = *waker;
    ready.set_value(Result<void>{});
    impl_->loop();
  });
  auto started = readyFuture.get();
  if (started) {
    impl_->started = true;
  } else {
    impl_->startError = started.error();
    impl_->worker.join();
  }
}

Engine::~Engine() {
  stop();
  if (impl_->wakeFd >= 0) ::close(impl_->wakeFd);
  if (impl_->runningFd >= 0) ::close(impl_->runningFd);
}

void Engine::stop() {
  if (!impl_->started || !impl_->worker.joinable()) return;
  impl_->post([this]() { impl_->quit = true; });
  impl_->worker.join();
  // The wake-up child died with the engine thread; its pid may be anyone's now.
  impl_->waker = -1;
  impl_->startError = Error{errors::kEngineStopped, "the native engine has stopped", true};
  impl_->started = false;
}

pid_t Engine::pid() const { return impl_->currentPid.load(); }

void Engine::observeSites(SiteObserver observer) { impl_->siteObserver = std::move(observer); }

int Engine::serveWhileStopped(int fd, std::function<void()> handler) {
  impl_->idleHandler = std::move(handler);
  impl_->idleFd = fd;
  if (impl_->runningFd < 0) impl_->runningFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  return impl_->runningFd;
}

bool Engine::inWaitpid() const { return impl_->inWaitpid.load(); }

bool Engine::launchedProcess() const { return impl_->proc && impl_->proc->launched; }

MemoryAccess& Engine::memory() { return impl_->memory; }

std::future<Result<pid_t>> Engine::launch(LaunchOptions options) {
  return impl_->call<pid_t>([this, options = std::move(options)]() { return impl_->doLaunch(options); });
}

std::future<Result<void>> Engine::attach(pid_t pid) {
  return impl_->call<void>([this, pid]() { return impl_->doAttach(pid); });
}

std::future<Result<void>> Engine::detach() {
  return impl_->call<void>([this]() { return impl_->doDetach(); });
}

std::future<Result<void>> Engine::kill() {
  return impl_->call<void>([this]() { return impl_->doKill(); });
}

std::future<Result<void>> Engine::resume() {
  return impl_->call<void>([this]() -> Result<void> {
    if (auto r = impl_->requireStopped(); !r) return r;
    if (impl_->quiesced > 0) {
      // Inside a callback: at a library load the process runs on anyway unless paused; at a
      // stop it resumes once the callback returns.
      if (impl_->proc->running) impl_->proc->pauseRequested = false;
      else impl_->proc->resumeAfterCallback = true;
      return {};
    }
    return impl_->resumeAll();
  });
}

std::future<Result<void>> Engine::pause() {
  return impl_->call<void>([this]() { return impl_->doPause(); });
}

std::future<Result<void>> Engine::stepInstruction(pid_t tid) {
  return impl_->call<void>([this, tid]() { return impl_->doStepInstruction(tid); });
}

std::future<Result<void>> Engine::stepOut(pid_t tid, std::optional<ReturnTarget> target) {
  return impl_->call<void>([this, tid, target]() { return impl_->doStepOut(tid, target); });
}

std::future<Result<void>> Engine::stepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls) {
  return impl_->call<void>([this, tid, low, high, overCalls]() { return impl_->doStepRange(tid, low, high, overCalls); });
}

std::future<Result<BreakpointId>> Engine::addBreakpoint(std::uint64_t address, StopPredicate condition, HitRule /*rule*/) {
  return impl_->call<BreakpointId>([this, address, condition = std::move(condition)]() {
    return impl_->doAddBreakpoint(address, condition);
  });
}

std::future<Result<void>> Engine::removeBreakpoint(BreakpointId id) {
  return impl_->call<void>([this, id]() { return impl_->doRemoveBreakpoint(id); });
}

std::future<Result<void>> Engine::enableBreakpoint(BreakpointId id, bool enabled) {
  return impl_->call<void>([this, id, enabled]() { return impl_->doEnableBreakpoint(id, enabled); });
}

std::future<Result<int>> Engine::addWatchpoint(std::uint64_t address, int size, WatchKind kind) {
  return impl_->call<int>([this, address, size, kind]() { return impl_->doAddWatchpoint(address, size, kind); });
}

std::future<Result<void>> Engine::removeWatchpoint(int slot) {
  return impl_->call<void>([this, slot]() { return impl_->doRemoveWatchpoint(slot); });
}

std::future<Result<ThreadRegisters>> Engine::registers(pid_t tid) {
  return impl_->call<ThreadRegisters>([this, tid]() { return impl_->doGetRegisters(tid); });
}

std::future<Result<void>> Engine::setRegisters(const ThreadRegisters& registers) {
  return impl_->call<void>([this, registers]() { return impl_->doSetRegisters(registers); });
}

std::future<Result<std::vector<ThreadEntry>>> Engine::threads() {
  return impl_->call<std::vector<ThreadEntry>>([this]() { return impl_->doThreads(); });
}

std::future<Result<std::vector<LoadedObject>>> Engine::loadedObjects() {
  return impl_->call<std::vector<LoadedObject>>([this]() -> Result<std::vector<LoadedObject>> {
    if (!impl_->proc) return Error{errors::kNoProcess, "no process is being debugged", true};
    return impl_->proc->objects;
  });
}

std::future<Result<StepOverCounts>> Engine::stepOverCounts() {
  return impl_->call<StepOverCounts>([this]() -> Result<StepOverCounts> { return impl_->stepOvers; });
}

std::future<Result<void>> Engine::runOnEngineThread(std::function<Result<void>()> work) {
  return impl_->call<void>(std::move(work));
}

std::future<Result<void>> Engine::whileStopped(std::function<Result<void>()> work) {
  return impl_->call<void>([this, work = std::move(work)]() { return impl_->withStopped(work); });
}

Result<void> EngineMemory::read(std::uint64_t address, void* buffer, std::size_t size) {
  return impl_.call<void>([this, address, buffer, size]() { return impl_.readMemory(address, buffer, size); }).get();
}

Result<void> EngineMemory::write(std::uint64_t address, const void* buffer, std::size_t size) {
  return impl_.call<void>([this, address, buffer, size]() { return impl_.writeMemory(address, buffer, size); }).get();
}

}  // namespace strata::native::engine
