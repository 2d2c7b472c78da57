// NativeDebugger breakpoints: file:line with locals, moved lines, conditions, hit counts, log
// points, pending breakpoints in a dlopen'ed library, and one breakpoint hit by 8 threads.
#include <set>

#include "harness.hpp"
#include "strata/native/debugger/hit_rules.hpp"

using namespace strata::native::debugger;
using namespace strata::native::debugger::testing;

TEST_CASE("a file:line breakpoint stops on its line with the locals' values") {
  Session s;
  s.launch({"basic"});
  int line = lineOf(kSource, "square_body");
  auto states = ok(s.debugger.setSourceBreakpoints(kSource, {SourceBreakpoint{line}}));
  REQUIRE(states.size() == 1);
  CHECK(states[0].verified);
  CHECK(states[0].line == line);
  ok(s.debugger.configurationDone(false));

  auto stop = s.stop();
  CHECK(stop.reason == DebuggerStopReason::Breakpoint);
  REQUIRE(stop.hitBreakpointIds.size() == 1);
  CHECK(stop.hitBreakpointIds[0] == states[0].id);
  auto page = ok(s.debugger.stackTrace(stop.tid, 0, 10));
  REQUIRE(page.frames.size() >= 3);
  CHECK(page.frames[0].name == "square");
  CHECK(page.frames[0].line == line);
  CHECK(page.frames[0].file.ends_with("debuggee.c"));
  CHECK(page.frames[1].name == "add_squares");
  CHECK(s.local(page.frames[0].id, "v") == "3");
  CHECK(s.local(page.frames[1].id, "a") == "3");
  CHECK(s.local(page.frames[1].id, "b") == "4");
  CHECK(ok(s.debugger.evaluate("v * 2 + global_counter", page.frames[0].id)).value == "13");

  ok(s.debugger.resume());
  CHECK(s.stop().reason == DebuggerStopReason::Breakpoint);  // square(4)
  CHECK(ok(s.debugger.evaluate("v", 0)).value == "4");
  ok(s.debugger.resume());
  auto exit = s.exit();
  CHECK(exit.exitCode == 0);
  CHECK(s.output() == "total=25\n");
}

TEST_CASE("a breakpoint on a line without code moves to the next line with code") {
  Session s;
  s.launch({"basic"});
  int target = lineOf(kSource, "basic_total");
  auto states = ok(s.debugger.setSourceBreakpoints(kSource, {SourceBreakpoint{target - 2}}));
  REQUIRE(states.size() == 1);
  CHECK(states[0].verified);
  CHECK(states[0].line == target);
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  CHECK(stop.reason == DebuggerStopReason::Breakpoint);
  CHECK(s.top(stop.tid).line == target);
  ok(s.debugger.terminate());
}

TEST_CASE("conditions decide in the engine: true stops, false runs to the end") {
  int line = lineOf(kSource, "loop_body");
  SUBCASE("true") {
    Session s;
    s.launch({"loop"});
    SourceBreakpoint bp{line};
    bp.condition = "i == 4";
    ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
    ok(s.debugger.configurationDone(false));
    auto stop = s.stop();
    CHECK(stop.reason == DebuggerStopReason::Breakpoint);
    CHECK(ok(s.debugger.evaluate("i", 0)).value == "4");
    CHECK(ok(s.debugger.evaluate("sum", 0)).value == "6");
    ok(s.debugger.resume());
    CHECK(s.exit().exitCode == 0);
    CHECK(s.output() == "sum=45\n");
  }
  SUBCASE("false") {
    Session s;
    s.launch({"loop"});
    SourceBreakpoint bp{line};
    bp.condition = "i > 100";
    ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
    ok(s.debugger.configurationDone(false));
    CHECK(s.exit().exitCode == 0);
    CHECK(s.output() == "sum=45\n");
  }
  SUBCASE("a condition that does not parse is reported on the breakpoint") {
    Session s;
    s.launch({"loop"});
    SourceBreakpoint bp{line};
    bp.condition = "i ==";
    auto states = ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
    REQUIRE(states.size() == 1);
    CHECK_FALSE(states[0].verified);
    CHECK(states[0].message.find("condition 'i =='") != std::string::npos);
    ok(s.debugger.terminate());
  }
}

TEST_CASE("false conditions on lines that open with a load, a store of an immediate and a global read") {
  // The engine runs these first instructions itself instead of single-stepping them.
  Session s;
  s.launch({"basic"});
  std::vector<SourceBreakpoint> bps;
  for (const char* marker : {"basic_x", "basic_total", "square_body", "call_square", "after_call"}) {
    SourceBreakpoint bp{lineOf(kSource, marker)};
    bp.condition = "0";
    bps.push_back(bp);
  }
  ok(s.debugger.setSourceBreakpoints(kSource, bps));
  ok(s.debugger.configurationDone(false));
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "total=25\n");
}

TEST_CASE("hit conditions: a bare N stops on the N-th hit only, >=N from then on") {
  int line = lineOf(kSource, "loop_body");
  SUBCASE("N") {
    Session s;
    s.launch({"loop"});
    SourceBreakpoint bp{line};
    bp.hitCondition = "3";
    ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
    ok(s.debugger.configurationDone(false));
    s.stop();
    CHECK(ok(s.debugger.evaluate("i", 0)).value == "2");
    ok(s.debugger.resume());
    CHECK(s.exit().exitCode == 0);
  }
  SUBCASE(">=N") {
    Session s;
    s.launch({"loop"});
    SourceBreakpoint bp{line};
    bp.hitCondition = ">=9";
    ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
    ok(s.debugger.configurationDone(false));
    s.stop();
    CHECK(ok(s.debugger.evaluate("i", 0)).value == "8");
    ok(s.debugger.resume());
    s.stop();
    CHECK(ok(s.debugger.evaluate("i", 0)).value == "9");
    ok(s.debugger.resume());
    CHECK(s.exit().exitCode == 0);
  }
  SUBCASE("bad text") {
    auto parsed = parseHitCondition("> x");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find("'> x'") != std::string::npos);
    auto modulo = parseHitCondition("%4");
    REQUIRE(modulo.ok());
    CHECK((*modulo)(8));
    CHECK_FALSE((*modulo)(6));
  }
}

TEST_CASE("a log message prints its interpolated text and never stops") {
  Session s;
  s.launch({"loop"});
  SourceBreakpoint bp{lineOf(kSource, "loop_body")};
  bp.logMessage = "i={i} sum={sum}";
  ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
  ok(s.debugger.configurationDone(false));
  CHECK(s.exit().exitCode == 0);
  auto lines = s.logLines();
  REQUIRE(lines.size() == 10);
  CHECK(lines[0] == "i=0 sum=0\n");
  CHECK(lines[9] == "i=9 sum=36\n");
}

TEST_CASE("a breakpoint in a library loaded later is pending, then verified and hit") {
  Session s;
  s.launch({"plugin", STRATA_DBG_PLUGIN});
  int line = lineOf(kPluginSource, "plugin_line");
  auto states = ok(s.debugger.setSourceBreakpoints(kPluginSource, {SourceBreakpoint{line}}));
  REQUIRE(states.size() == 1);
  CHECK_FALSE(states[0].verified);
  CHECK(states[0].message.find("pending") != std::string::npos);
  ok(s.debugger.configurationDone(false));

  auto stop = s.stop();
  CHECK(stop.reason == DebuggerStopReason::Breakpoint);
  auto changed = s.changed();
  REQUIRE(changed.size() == 1);
  CHECK(changed[0].id == states[0].id);
  CHECK(changed[0].verified);
  CHECK(changed[0].line == line);
  auto frame = s.top(stop.tid);
  CHECK(frame.name == "plugin_compute");
  CHECK(frame.line == line);
  CHECK(ok(s.debugger.evaluate("v", 0)).value == "5");
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "plugin=11\n");
}

TEST_CASE("eight threads hitting one breakpoint each stop once, all-stop") {
  Session s;
  s.launch({"threads"});
  int line = lineOf(kSource, "worker_line");
  ok(s.debugger.setSourceBreakpoints(kSource, {SourceBreakpoint{line}}));
  ok(s.debugger.configurationDone(false));
  std::set<pid_t> tids;
  std::set<std::string> locals;
  for (int i = 0; i < 8; ++i) {
    auto stop = s.stop();
    REQUIRE(stop.reason == DebuggerStopReason::Breakpoint);
    tids.insert(stop.tid);
    auto frame = s.top(stop.tid);
    CHECK(frame.line == line);
    CHECK(frame.name == "worker");
    locals.insert(s.local(frame.id, "local"));
    if (i == 0) {
      auto threads = ok(s.debugger.threads());
      CHECK(threads.size() >= 2);
    }
    ok(s.debugger.resume());
  }
  CHECK(tids.size() == 8);
  CHECK(locals.size() == 8);
  CHECK(locals.count("70") == 1);
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "threads done\n");
}

TEST_CASE("function and instruction breakpoints") {
  Session s;
  s.launch({"basic"});
  auto fn = ok(s.debugger.setFunctionBreakpoints({FunctionBreakpoint{"add_squares"}}));
  REQUIRE(fn.size() == 1);
  CHECK(fn[0].verified);
  CHECK(fn[0].line == lineOf(kSource, "call_square"));
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  CHECK(stop.hitBreakpointIds == std::vector<int>{fn[0].id});
  CHECK(s.top(stop.tid).line == lineOf(kSource, "call_square"));

  auto ins = ok(s.debugger.setInstructionBreakpoints({InstructionBreakpoint{fn[0].address}}));
  REQUIRE(ins.size() == 1);
  CHECK(ins[0].verified);
  ok(s.debugger.setFunctionBreakpoints({}));
  auto code = ok(s.debugger.disassemble(fn[0].address, 3));
  REQUIRE(code.size() == 3);
  CHECK(code[0].address == fn[0].address);
  CHECK(code[0].line == lineOf(kSource, "call_square"));
  ok(s.debugger.terminate());
}
