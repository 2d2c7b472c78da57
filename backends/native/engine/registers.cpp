// A stopped process's threads as the debugger asks for them: their registers, read and
// written, and the list of them.
#include <sys/ptrace.h>
#include <sys/uio.h>

#include <fstream>

#include "engine_impl.hpp"

namespace strata::native::engine {

Result<ThreadRegisters> Engine::Impl::doGetRegisters(pid_t tid) {
  if (auto r = requireStopped(); !r) return r.takeError();
  Thread* t = findThread(tid);
  if (!t || !t->stopped) return Error{errors::kNoSuchThread, "registers: no stopped thread " + std::to_string(tid), true};
  auto gpr = regs(*t);
  if (!gpr) return gpr.takeError();
  ThreadRegisters out;
  out.tid = tid;
  out.gpr = **gpr;
  if (ptrace(PTRACE_GETFPREGS, tid, nullptr, &out.fpr) == 0) out.hasFpr = true;
  else return errnoError(errors::kPtraceFailed, "PTRACE_GETFPREGS thread " + std::to_string(tid));
  return out;
}

Result<void> Engine::Impl::doSetRegisters(const ThreadRegisters& registers) {
  if (auto r = requireStopped(); !r) return r;
  Thread* t = findThread(registers.tid);
  if (!t || !t->stopped) return Error{errors::kNoSuchThread, "registers: no stopped thread " + std::to_string(registers.tid), true};
  user_regs_struct gpr = registers.gpr;
  if (ptrace(PTRACE_SETREGS, t->tid, nullptr, &gpr) != 0) {
    t->regsValid = false;
    return errnoError(errors::kPtraceFailed, "PTRACE_SETREGS thread " + std::to_string(t->tid));
  }
  t->regs = gpr;
  t->regsValid = true;
  t->regsDirty = false;
  // A moved pc no longer sits on the breakpoint it hit.
  if (t->atSite && gpr.rip != t->atSite) t->atSite = 0;
  if (registers.hasFpr) {
    user_fpregs_struct fpr = registers.fpr;
    if (ptrace(PTRACE_SETFPREGS, t->tid, nullptr, &fpr) != 0)
      return errnoError(errors::kPtraceFailed, "PTRACE_SETFPREGS thread " + std::to_string(t->tid));
  }
  return {};
}

Result<std::vector<ThreadEntry>> Engine::Impl::doThreads() {
  if (!proc) return Error{errors::kNoProcess, "threads: no process is being debugged", true};
  std::vector<ThreadEntry> out;
  for (auto& [tid, t] : proc->threads) {
    if (t.exiting && !t.stopped) continue;  // past its exit stop: only its death is left to report
    ThreadEntry info{tid, {}};
    std::ifstream comm("/proc/" + std::to_string(proc->pid) + "/task/" + std::to_string(tid) + "/comm");
    std::getline(comm, info.name);
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace strata::native::engine
