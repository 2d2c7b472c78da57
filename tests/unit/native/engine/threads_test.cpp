// Eight threads on one breakpoint: every hit reported once, all-stop at each stop.
#include <fstream>
#include <map>

#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

namespace {

// The scheduler state letter of every thread of `pid` ('t': stopped by a tracer).
std::map<pid_t, char> threadStates(pid_t pid, const std::vector<ThreadEntry>& threads) {
  std::map<pid_t, char> states;
  for (auto& t : threads) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(t.tid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    auto close = text.rfind(')');
    states[t.tid] = close != std::string::npos && close + 2 < text.size() ? text[close + 2] : '?';
  }
  return states;
}

}  // namespace

TEST_CASE("8 threads hitting one breakpoint: all 800 hits reported, none lost, all-stop each time") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = THREADS_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t hit = runtimeAddress(sink, THREADS_PATH, "hit_me");
  BreakpointId id = ok(engine.addBreakpoint(hit));
  ok(engine.resume());
  std::map<pid_t, int> perThread;
  int hits = 0;
  std::size_t maxThreads = 0;
  for (;;) {
    auto e = sink.next();
    REQUIRE_MESSAGE(e.has_value(), "no event after " << hits << " hits");
    if (auto* exit = std::get_if<ExitEvent>(&*e)) {
      CHECK(exit->exitCode == 0);
      break;
    }
    auto& stop = std::get<EngineStop>(*e);
    REQUIRE(stop.reason == EngineStopReason::Breakpoint);
    REQUIRE(stop.breakpoints == std::vector<BreakpointId>{id});
    CHECK(stop.pc == hit);
    ++hits;
    ++perThread[stop.tid];
    if (hits % 50 == 1) {
      auto threads = ok(engine.threads());
      maxThreads = std::max(maxThreads, threads.size());
      for (auto& [tid, state] : threadStates(pid, threads)) CHECK_MESSAGE(state == 't', "thread " << tid);
      auto regs = ok(engine.registers(stop.tid));
      CHECK(regs.gpr.rip == hit);
      CHECK(regs.gpr.rdi < 8);
      // Names are read when asked, so a name set after the thread started shows.
      for (auto& t : threads)
        if (t.tid == stop.tid) CHECK(t.name == "worker-" + std::to_string(regs.gpr.rdi));
    }
    ok(engine.resume());
  }
  CHECK(hits == 800);
  CHECK(perThread.size() == 8);
  for (auto& [tid, n] : perThread) CHECK(n == 100);
  CHECK(maxThreads >= 2);
  CHECK(out.readAll() == "total=800\n");
}

TEST_CASE("8 threads, condition evaluated in the engine: 800 hits counted, no stop") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = THREADS_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t hit = runtimeAddress(sink, THREADS_PATH, "hit_me");
  // Conditions that say no: at the entry and at +4 the engine emulates the instruction (`push
  // %rbp`, an emulated store) and never stops the other threads; at step_me every hit stops all
  // threads and single-steps the one that hit.
  bool stepped = false;
  SUBCASE("function entry") {}
  SUBCASE("mid-function") { hit += 4; }
  SUBCASE("a single-stepped instruction") {
    hit = runtimeAddress(sink, THREADS_PATH, "step_me");
    stepped = true;
  }
  std::map<pid_t, int> perThread;  // engine thread only
  // Counted from the first hit (engine calls from the engine thread run at once) to the exit:
  // the engine's own breakpoints, in the dynamic linker, are stepped over before main.
  StepOverCounts first;
  int hits = 0;
  ok(engine.addBreakpoint(hit, [&](const HitContext& ctx) {
    ++perThread[ctx.tid];
    if (++hits == 1) first = ok(engine.stepOverCounts());
    return false;
  }));
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);
  StepOverCounts last = ok(engine.stepOverCounts());
  std::uint64_t emulated = last.emulated - first.emulated, singleStepped = last.singleStepped - first.singleStepped;
  CHECK(emulated + singleStepped == 800);
  CHECK((stepped ? singleStepped : emulated) == 800);
  CHECK(sink.threadsStarted == 8);
  CHECK(sink.threadsExited == 8);
  CHECK(perThread.size() == 8);
  int total = 0;
  for (auto& [tid, n] : perThread) total += n;
  CHECK(total == 800);
  CHECK(out.readAll() == "total=800\n");
}

// Each hit stops all threads and is reported; resuming goes on past the breakpoint's
// instruction one of two ways, each checked here against the engine's own counts.
TEST_CASE("8 threads reporting every hit: none lost whether the instruction is emulated or single-stepped") {
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.launch({.program = THREADS_PATH}));
  sink.stop();
  std::uint64_t address = 0;
  bool emulated = false;
  SUBCASE("an emulated store: hit_me+4, mov %edi,-0x14(%rbp)") {
    address = runtimeAddress(sink, THREADS_PATH, "hit_me") + 4;
    std::uint8_t code[3] = {};
    ok(engine.memory().read(address, code, sizeof code));
    REQUIRE(code[0] == 0x89);
    REQUIRE(code[1] == 0x7d);
    emulated = true;
  }
  SUBCASE("a single-stepped locked add: step_me, lock addl $1,stepped(%rip)") {
    address = runtimeAddress(sink, THREADS_PATH, "step_me");
    std::uint8_t code[2] = {};
    ok(engine.memory().read(address, code, sizeof code));
    REQUIRE(code[0] == 0xf0);  // lock
    REQUIRE(code[1] == 0x83);  // addl $imm8, r/m32
  }
  ok(engine.addBreakpoint(address));
  ok(engine.resume());
  std::map<pid_t, int> perThread;
  int hits = 0;
  StepOverCounts first;  // from the first hit to the exit (ld.so's own breakpoints aside)
  for (;;) {
    auto e = sink.next();
    REQUIRE_MESSAGE(e.has_value(), "no event after " << hits << " hits");
    if (auto* exit = std::get_if<ExitEvent>(&*e)) {
      CHECK(exit->exitCode == 0);  // 1: step_me's add did not run exactly 800 times
      break;
    }
    auto& stop = std::get<EngineStop>(*e);
    REQUIRE(stop.reason == EngineStopReason::Breakpoint);
    CHECK(stop.pc == address);
    ++hits;
    ++perThread[stop.tid];
    if (hits == 1) first = ok(engine.stepOverCounts());
    ok(engine.resume());
  }
  CHECK(hits == 800);
  CHECK(perThread.size() == 8);
  for (auto& [tid, n] : perThread) CHECK(n == 100);
  // Every hit's thread went on past the breakpoint once, by the path this subcase names.
  StepOverCounts last = ok(engine.stepOverCounts());
  std::uint64_t nEmulated = last.emulated - first.emulated, nStepped = last.singleStepped - first.singleStepped;
  CHECK(nEmulated + nStepped == 800);
  CHECK((emulated ? nEmulated : nStepped) == 800);
}

TEST_CASE("pause stops every thread of a running program") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = THREADS_PATH}));
  sink.stop();
  std::uint64_t hit = runtimeAddress(sink, THREADS_PATH, "hit_me");
  // Stop once all eight threads exist, then let them run and pause from outside.
  int seen = 0;
  ok(engine.addBreakpoint(hit, [&](const HitContext&) { return ++seen == 8 * 50; }));
  ok(engine.resume());
  EngineStop half = sink.stop();
  REQUIRE(half.reason == EngineStopReason::Breakpoint);
  auto threads = ok(engine.threads());
  CHECK(threads.size() >= 2);
  ok(engine.resume());
  ok(engine.pause());
  auto e = sink.next();
  REQUIRE(e.has_value());
  if (auto* stop = std::get_if<EngineStop>(&*e)) {
    CHECK((stop->reason == EngineStopReason::Pause || stop->reason == EngineStopReason::Breakpoint));
    for (auto& [tid, state] : threadStates(pid, ok(engine.threads()))) CHECK(state == 't');
    ok(engine.kill());
    sink.exit();
  } else {
    // Finished before the pause arrived: legal, but then the exit must be clean.
    CHECK(std::get<ExitEvent>(*e).exitCode == 0);
  }
}
