// NativeDebugger additions the adapter's native backend uses: step-in targets, stop signals,
// data breakpoints, modules, memory prefixes and disassembly around an address.
#include <signal.h>

#include <algorithm>

#include "../hardware_suite.hpp"
#include "harness.hpp"

using namespace strata::native::debugger;
using namespace strata::native::debugger::testing;

TEST_CASE("stepInTargets lists the call on the line; stepInto enters it past the prologue") {
  Session s;
  auto stop = runTo(s, "basic", "call_square");
  auto frame = s.top(stop.tid);
  auto targets = ok(s.debugger.stepInTargets(frame.id));
  REQUIRE(targets.size() == 1);
  CHECK(targets[0].label == "square");
  CHECK(targets[0].line == lineOf(kSource, "call_square"));
  ok(s.debugger.stepInto(stop.tid, targets[0].id));
  auto in = s.stop();
  CHECK(in.reason == DebuggerStopReason::Step);
  auto callee = s.top(in.tid);
  CHECK(callee.name == "square");
  CHECK(callee.line == lineOf(kSource, "square_body"));
  CHECK(s.local(callee.id, "v") == "3");
  // Ids from before the step are void.
  CHECK_FALSE(s.debugger.stepInto(in.tid, targets[0].id).get().ok());
  ok(s.debugger.terminate());
}

TEST_CASE("setStopSignals without SIGSEGV lets the crash reach the program") {
  Session s;
  s.launch({"crash"});
  ok(s.debugger.setStopSignals({SIGABRT}));
  ok(s.debugger.configurationDone(false));
  auto exit = s.exit();
  CHECK(exit.signaled);
  CHECK(exit.signal == SIGSEGV);
}

TEST_CASE("modules, readMemoryPrefix and disassembleAround") {
  Session s;
  auto stop = runTo(s, "basic", "call_square");
  auto mods = ok(s.debugger.modules());
  bool exe = false;
  for (const auto& m : mods) exe = exe || (m.path == STRATA_DBG_TARGET && m.hasDebugInfo && m.low < m.high);
  CHECK(exe);
  auto sources = ok(s.debugger.sourceFiles());
  CHECK(std::find(sources.begin(), sources.end(), kSource) != sources.end());
  CHECK(ok(s.debugger.sourceFiles(0)).empty());
  CHECK(ok(s.debugger.readMemoryPrefix(0, 64)).empty());
  CHECK(ok(s.debugger.readMemoryPrefix(stop.pc, 16)).size() == 16);
  auto around = ok(s.debugger.disassembleAround(stop.pc, -4, 10));
  REQUIRE(around.size() == 10);
  CHECK(around[4].address == stop.pc);
  CHECK(around[4].line == lineOf(kSource, "call_square"));
  for (std::size_t i = 1; i < around.size(); ++i) CHECK(around[i].address > around[i - 1].address);
  auto nothing = ok(s.debugger.disassembleAround(8, -2, 4));
  REQUIRE(nothing.size() == 4);
  CHECK(nothing[3].instruction == "??");
  ok(s.debugger.terminate());
}

TEST_CASE("data breakpoints: targets and checked arguments, without the hardware firing") {
  Session s;
  runTo(s, "slow", "slow_line");
  auto target = ok(s.debugger.dataTarget("global_counter", 0));
  CHECK(target.size == 4);
  CHECK(target.name == "global_counter");
  CHECK_FALSE(s.debugger.dataTarget("no_such_name", 0).get().ok());
  auto bad = ok(s.debugger.setDataBreakpoints({DataBreakpoint{target.address + 1, 4, false, "odd", ""},
                                               DataBreakpoint{target.address, 3, false, "three", ""}}));
  CHECK_FALSE(bad[0].verified);
  CHECK(bad[0].message.find("aligned") != std::string::npos);
  CHECK_FALSE(bad[1].verified);
  auto set = ok(s.debugger.setDataBreakpoints({DataBreakpoint{target.address, target.size, false, "global_counter", ""}}));
  REQUIRE(set.size() == 1);
  CHECK(set[0].verified);
  ok(s.debugger.terminate());
}

TEST_CASE("a data breakpoint stops on the write with old and new values" * doctest::test_suite(kHardwareSuite)) {
  Session s;
  runTo(s, "slow", "slow_line");
  auto target = ok(s.debugger.dataTarget("global_counter", 0));
  auto set = ok(s.debugger.setDataBreakpoints({DataBreakpoint{target.address, target.size, false, "global_counter", ""}}));
  REQUIRE(set.size() == 1);
  REQUIRE(set[0].verified);
  ok(s.debugger.setSourceBreakpoints(kSource, {}));
  ok(s.debugger.resume());
  auto hit = s.stop();
  CHECK(hit.reason == DebuggerStopReason::DataBreakpoint);
  CHECK(hit.hitBreakpointIds == std::vector<int>{set[0].id});
  CHECK(hit.description.find("global_counter: ") == 0);
  CHECK(hit.description.find(" -> ") != std::string::npos);
  ok(s.debugger.terminate());
}
