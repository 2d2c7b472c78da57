// Range stepping: the engine single-steps a thread through a source line's addresses itself.
#include "engine_impl.hpp"

namespace strata::native::engine {

Result<void> Engine::Impl::doStepRange(pid_t tid, std::uint64_t low, std::uint64_t high, bool overCalls) {
  if (auto r = requireStopped(); !r) return r;
  if (!findThread(tid)) return Error{errors::kNoSuchThread, "step: no thread " + std::to_string(tid), true};
  if (low >= high) return Error{errors::kInternal, "step: empty address range", true};
  proc->range = RangePlan{tid, low, high, overCalls};
  return continueRange();
}

// Other threads stay stopped while the thread single-steps, and run while a call it made
// runs (a callee may wait for them).
Result<void> Engine::Impl::continueRange() {
  const RangePlan plan = *proc->range;
  for (;;) {
    Thread* t = findThread(plan.tid);
    if (!t) {
      proc->range.reset();
      return {};
    }
    auto pc = regs(*t);
    if (!pc) {
      proc->range.reset();
      return pc.takeError();
    }
    auto site = proc->sites.find((*pc)->rip);
    auto outcome = (site != proc->sites.end() && site->second.inserted) ? stepOverSite(*t) : singleStep(*t);
    if (!outcome) {
      if (proc) proc->range.reset();
      return outcome.takeError();
    }
    if (!proc) return {};
    t = findThread(plan.tid);
    if (!t || *outcome == Outcome::Gone) {
      proc->range.reset();
      return {};
    }
    if (*outcome == Outcome::Report) {  // a signal, a watchpoint, a breakpoint stepped onto
      reportStop(*t);
      return {};
    }
    auto now = regs(*t);
    if (!now) {
      proc->range.reset();
      return now.takeError();
    }
    const user_regs_struct& g = **now;
    if (g.rip >= plan.low && g.rip < plan.high) continue;
    if (plan.overCalls) {
      // Just entered a call made from the range: its return address is on top of the stack.
      std::uint64_t ret = 0;
      if (readMemory(g.rsp, &ret, sizeof ret) && ret >= plan.low && ret < plan.high) {
        cancelStepOut();
        auto s = acquireSite(ret);
        if (!s) {
          proc->range.reset();
          return s.takeError();
        }
        (*s)->stepOut = true;
        if (auto r = syncSite(ret); !r) {
          proc->range.reset();
          return r;
        }
        proc->stepOut = StepOutPlan{plan.tid, ret, g.rsp + 8};
        return resumeAll();
      }
    }
    queueStop(*t, stopOf(EngineStopReason::Step));
    reportStop(*t);
    return {};
  }
}

}  // namespace strata::native::engine
