// Bench: condition evaluation per hit, stack paging at depth 1000, and paging a 100k vector.
#include <chrono>
#include <cstdio>
#include <memory>

#include "strata/native/symbols/expression.hpp"
#include "strata/native/symbols/values.hpp"
#include "traced_process.hpp"

using namespace strata::native::symbols;
using Clock = std::chrono::steady_clock;

namespace {

double usSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

#define CHECKED(expr)                                                  \
  ({                                                                   \
    auto r_ = (expr);                                                  \
    if (!r_) {                                                         \
      std::fprintf(stderr, "%s: %s\n", #expr, r_.error().message.c_str()); \
      std::exit(1);                                                    \
    }                                                                  \
    std::move(*r_);                                                    \
  })

struct Target {
  std::unique_ptr<test::TracedProcess> process;
  SymbolCache cache;
  std::unique_ptr<ModuleMap> modules;
  void run(const char* path, int traps) {
    process.reset(CHECKED(test::TracedProcess::start(path)));
    for (int i = 0; i < traps; ++i) {
      auto r = process->continueToTrap();
      if (!r) std::exit(1);
    }
    modules = std::make_unique<ModuleMap>(cache);
    for (const auto& o : CHECKED(loadedObjectsFromProcMaps(process->pid()))) (void)CHECKED(modules->add(o));
  }
};

}  // namespace

int main() {
  const int rounds = 5;
  {
    Target t;
    t.run(STRATA_SYM_C, 1);
    auto unwinder = CHECKED(RemoteUnwinder::create());
    auto expr = CHECKED(Expression::parse("p->x + q.x == 13 && scale > 1"));
    for (int round = 0; round < rounds; ++round) {
      // End to end per hit: unwind, find the frame, build its context, evaluate.
      const int hits = 2000;
      auto t0 = Clock::now();
      for (int i = 0; i < hits; ++i) {
        StackView stack(CHECKED(unwinder->unwind(t.process->pid(), 8)), *t.modules);
        auto frames = stack.frames(0, 8);
        for (const Frame& f : frames) {
          if (f.function != "add_points") continue;
          auto ctx = CHECKED(makeFrameContext(stack, f, t.process->memory()));
          if (!CHECKED(expr.evaluateCondition(ctx))) return 1;
        }
      }
      double perHit = usSince(t0) / hits;
      // Evaluation alone against a ready frame.
      StackView stack(CHECKED(unwinder->unwind(t.process->pid(), 8)), *t.modules);
      std::shared_ptr<const FrameContext> ctx;
      for (const Frame& f : stack.frames(0, 8))
        if (f.function == "add_points") ctx = CHECKED(makeFrameContext(stack, f, t.process->memory()));
      const int evals = 100000;
      t0 = Clock::now();
      for (int i = 0; i < evals; ++i)
        if (!CHECKED(expr.evaluateCondition(ctx))) return 1;
      double perEval = usSince(t0) / evals;
      std::printf("condition: %.2f us/eval (%.0f/s), unwind+frame+eval %.1f us/hit (%.0f/s)\n", perEval,
                  1e6 / perEval, perHit, 1e6 / perHit);
    }
  }
  {
    // A breakpoint hit in frame 0: what the engine does per hit of a conditional breakpoint
    // (registers → frame context → evaluate), without the ptrace round trip.
    Target t;
    t.process.reset(CHECKED(test::TracedProcess::start(STRATA_SYM_C)));
    t.modules = std::make_unique<ModuleMap>(t.cache);
    for (const auto& o : CHECKED(loadedObjectsFromProcMaps(t.process->pid()))) (void)CHECKED(t.modules->add(o));
    const Module* exe = nullptr;
    for (const Module& m : t.modules->modules())
      if (m.name() == "strata_sym_c") exe = &m;
    auto fns = CHECKED(exe->symbols->functionsNamed("square"));
    std::uint64_t at = exe->symbols->afterPrologue(fns.front()) + exe->object.loadBias;
    long original = CHECKED(t.process->insertBreakpoint(at));
    if (!t.process->continueToTrap()) return 1;
    auto regs = CHECKED(t.process->registers());
    regs.gpr.rip = at;
    if (!t.process->removeBreakpoint(at, original)) return 1;
    auto expr = CHECKED(Expression::parse("v == 24 && g_counter > 40"));
    for (int round = 0; round < rounds; ++round) {
      const int hits = 20000;
      auto t0 = Clock::now();
      for (int i = 0; i < hits; ++i) {
        auto ctx = CHECKED(makeTopFrameContext(*t.modules, regs, t.process->memory()));
        if (!CHECKED(expr.evaluateCondition(ctx))) return 1;
      }
      double perHit = usSince(t0) / hits;
      std::printf("frame-0 condition 'v == 24 && g_counter > 40': context+eval %.2f us/hit (%.0f/s)\n", perHit,
                  1e6 / perHit);
    }
  }
  {
    Target t;
    t.run(STRATA_SYM_CPP, 2);
    auto unwinder = CHECKED(RemoteUnwinder::create());
    for (int round = 0; round < rounds; ++round) {
      auto t0 = Clock::now();
      StackView stack(CHECKED(unwinder->unwind(t.process->pid())), *t.modules);
      double unwindUs = usSince(t0);
      t0 = Clock::now();
      auto first = stack.frames(0, 20);
      double firstUs = usSince(t0);
      t0 = Clock::now();
      std::size_t total = stack.totalFrames();
      double totalUs = usSince(t0);
      t0 = Clock::now();
      auto mid = stack.frames(500, 20);
      double midUs = usSince(t0);
      std::printf("stack depth %zu: unwind %.0f us, first page %.0f us, totalFrames %.0f us, page at 500 %.0f us\n",
                  total, unwindUs, firstUs, totalUs, midUs);
    }
  }
  {
    Target t;
    t.run(STRATA_SYM_CPP, 1);
    auto unwinder = CHECKED(RemoteUnwinder::create());
    StackView stack(CHECKED(unwinder->unwind(t.process->pid())), *t.modules);
    for (const Frame& f : stack.frames(0, 10)) {
      if (f.function != "main") continue;
      auto ctx = CHECKED(makeFrameContext(stack, f, t.process->memory()));
      for (int round = 0; round < rounds; ++round) {
        auto t0 = Clock::now();
        auto big = CHECKED(lookupVariable(ctx, "big"));
        Presentation p = present(big);
        auto page = CHECKED(children(big, ChildFilter::Indexed, 50000, 100));
        std::string last;
        for (auto& v : page) last = present(v).value;
        std::printf("vector<int>(100000): %s, a page of %zu children at 50000 in %.0f us\n", p.value.c_str(),
                    page.size(), usSince(t0));
      }
    }
  }
  return 0;
}
