// Hardware watchpoints: x86-64 debug registers DR0–DR3 set through PTRACE_POKEUSER on every thread.
#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <mutex>

#include "engine_impl.hpp"

namespace strata::native::engine {

namespace {

constexpr std::size_t debugRegOffset(int index) {
  return offsetof(struct user, u_debugreg) + static_cast<std::size_t>(index) * sizeof(unsigned long);
}

Result<void> poke(pid_t tid, int index, std::uint64_t value) {
  if (ptrace(PTRACE_POKEUSER, tid, reinterpret_cast<void*>(debugRegOffset(index)), reinterpret_cast<void*>(value)) != 0)
    return errnoError(errors::kPtraceFailed, "PTRACE_POKEUSER DR" + std::to_string(index) + " thread " + std::to_string(tid));
  return {};
}

std::uint64_t dr7For(const Watchpoint (&watch)[4]) {
  std::uint64_t dr7 = 0;
  for (int i = 0; i < 4; ++i) {
    if (!watch[i].used) continue;
    std::uint64_t rw = watch[i].kind == WatchKind::Write ? 0b01 : 0b11;
    std::uint64_t len = watch[i].size == 1 ? 0b00 : watch[i].size == 2 ? 0b01 : watch[i].size == 4 ? 0b11 : 0b10;
    dr7 |= 1ull << (2 * i);  // local enable
    dr7 |= rw << (16 + 4 * i);
    dr7 |= len << (18 + 4 * i);
  }
  return dr7;
}

}  // namespace

Result<void> Engine::Impl::applyDebugRegisters(pid_t tid) {
  bool any = false;
  for (auto& w : proc->watch) any = any || w.used;
  if (!any && !proc->debugRegistersUsed) return {};  // a new thread starts with them clear
  proc->debugRegistersUsed = true;
  // DR7 off first: the kernel checks each address against the current DR7 settings.
  if (auto r = poke(tid, 7, 0); !r) return r;
  for (int i = 0; i < 4; ++i)
    if (proc->watch[i].used)
      if (auto r = poke(tid, i, proc->watch[i].address); !r) return r;
  return poke(tid, 7, dr7For(proc->watch));
}

Result<void> Engine::Impl::clearDebugRegisters(pid_t tid) {
  if (auto r = poke(tid, 7, 0); !r) return r;
  for (int i = 0; i < 4; ++i)
    if (auto r = poke(tid, i, 0); !r) return r;
  return {};
}

Result<int> Engine::Impl::doAddWatchpoint(std::uint64_t address, int size, WatchKind kind) {
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return Error{errors::kBadWatchpoint, "watchpoint: size must be 1, 2, 4 or 8 bytes, not " + std::to_string(size), true};
  if (address % static_cast<std::uint64_t>(size) != 0)
    return Error{errors::kBadWatchpoint, "watchpoint: the address must be aligned to its size (" + std::to_string(size) + " bytes)", true};
  int slot = -1;
  auto r = withStopped([&]() -> Result<void> {
    for (int i = 0; i < 4 && slot < 0; ++i)
      if (!proc->watch[i].used) slot = i;
    if (slot < 0) return Error{errors::kNoFreeDebugRegister, "watchpoint: all four hardware debug registers are in use", true};
    proc->watch[slot] = Watchpoint{true, address, size, kind};
    for (auto& [tid, t] : proc->threads) {
      if (!t.stopped || t.exiting) continue;
      if (auto a = applyDebugRegisters(tid); !a) {
        proc->watch[slot] = Watchpoint{};
        for (auto& [tid2, t2] : proc->threads)
          if (t2.stopped && !t2.exiting) (void)applyDebugRegisters(tid2);
        return a;
      }
    }
    return {};
  });
  if (!r) return r.takeError();
  return slot;
}

Result<void> Engine::Impl::doRemoveWatchpoint(int slot) {
  if (slot < 0 || slot > 3) return Error{errors::kBadWatchpoint, "watchpoint: no slot " + std::to_string(slot), true};
  return withStopped([&]() -> Result<void> {
    if (!proc->watch[slot].used) return Error{errors::kBadWatchpoint, "watchpoint: slot " + std::to_string(slot) + " is not in use", true};
    proc->watch[slot] = Watchpoint{};
    Result<void> result;
    for (auto& [tid, t] : proc->threads)
      if (t.stopped && !t.exiting)
        if (auto a = applyDebugRegisters(tid); !a && result) result = a;
    return result;
  });
}

Result<bool> hardwareWatchpointsWork() {
  static std::mutex once;
  static std::optional<bool> cached;
  std::lock_guard lock(once);
  if (cached) return *cached;
  static volatile long probe = 0;
  pid_t child = fork();
  if (child < 0) return errnoError(errors::kSystemCallFailed, "watchpoint probe: fork");
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(2);
    raise(SIGSTOP);
    probe = 1;
    _exit(0);
  }
  auto reap = [&](int sig) {
    if (sig) ::kill(child, sig);
    int st = 0;
    while (waitpid(child, &st, __WALL) < 0 && errno == EINTR) {
    }
    return st;
  };
  int status = reap(0);
  if (!WIFSTOPPED(status)) return Error{errors::kPtraceFailed, "watchpoint probe: the child did not stop", true};
  Watchpoint watch[4];
  watch[0] = Watchpoint{true, reinterpret_cast<std::uint64_t>(&probe), 8, WatchKind::Write};
  if (auto r = poke(child, 0, watch[0].address); !r) {
    reap(SIGKILL);
    return r.takeError();
  }
  if (auto r = poke(child, 7, dr7For(watch)); !r) {
    reap(SIGKILL);
    return r.takeError();
  }
  if (ptrace(PTRACE_CONT, child, nullptr, 0) != 0) {
    int err = errno;
    reap(SIGKILL);
    return errnoError(errors::kPtraceFailed, "watchpoint probe: PTRACE_CONT", err);
  }
  status = reap(0);
  bool trapped = WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
  if (WIFSTOPPED(status)) reap(SIGKILL);
  cached = trapped;
  return trapped;
}

bool Engine::Impl::onWatchTrap(Thread& thread) {
  bool any = false;
  for (auto& w : proc->watch) any = any || w.used;
  if (!any) return false;
  errno = 0;
  long dr6 = ptrace(PTRACE_PEEKUSER, thread.tid, reinterpret_cast<void*>(debugRegOffset(6)), nullptr);
  if (errno != 0) return false;
  (void)poke(thread.tid, 6, 0);  // DR6 bits are sticky
  for (int i = 0; i < 4; ++i) {
    if (!(dr6 & (1l << i)) || !proc->watch[i].used) continue;
    EngineStop ev = stopOf(EngineStopReason::Watchpoint);
    ev.watchpointSlot = i;
    ev.watchAddress = proc->watch[i].address;
    queueStop(thread, std::move(ev));
    return true;
  }
  return false;
}

}  // namespace strata::native::engine
