// NativeDebugger execution and inspection: next, stepIn, stepOut, deep stacks, crashes, detach.
#include <sys/wait.h>

#include "harness.hpp"

using namespace strata::native::debugger;
using namespace strata::native::debugger::testing;

TEST_CASE("next steps over a call to the next line of the same function") {
  Session s;
  auto stop = runTo(s, "basic", "call_square");
  ok(s.debugger.next(stop.tid));
  auto stepped = s.stop();
  CHECK(stepped.reason == DebuggerStopReason::Step);
  auto frame = s.top(stepped.tid);
  CHECK(frame.name == "add_squares");
  CHECK(frame.line == lineOf(kSource, "after_call"));
  CHECK(s.local(frame.id, "sa") == "9");
  ok(s.debugger.terminate());
}

TEST_CASE("stepIn stops on the callee's first line; stepOut returns to the caller") {
  Session s;
  auto stop = runTo(s, "basic", "call_square");
  ok(s.debugger.stepIn(stop.tid));
  auto in = s.stop();
  CHECK(in.reason == DebuggerStopReason::Step);
  auto frame = s.top(in.tid);
  CHECK(frame.name == "square");
  CHECK(frame.line == lineOf(kSource, "square_body"));
  CHECK(s.local(frame.id, "v") == "3");

  ok(s.debugger.stepOut(in.tid));
  auto out = s.stop();
  CHECK(out.reason == DebuggerStopReason::Step);
  auto caller = s.top(out.tid);
  CHECK(caller.name == "add_squares");
  CHECK(caller.line == lineOf(kSource, "call_square"));

  ok(s.debugger.next(out.tid));
  auto after = s.stop();
  CHECK(s.top(after.tid).line == lineOf(kSource, "after_call"));
  ok(s.debugger.terminate());
}

TEST_CASE("stepIn steps out of a function without debug info and stops on the next line") {
  Session s;
  auto stop = runTo(s, "nodebug", "nodebug_call");
  ok(s.debugger.stepIn(stop.tid));
  auto stepped = s.stop();
  CHECK(stepped.reason == DebuggerStopReason::Step);
  auto frame = s.top(stepped.tid);
  CHECK(frame.name == "nodebug");
  CHECK(frame.line == lineOf(kSource, "nodebug_after"));
  CHECK(s.local(frame.id, "r") == "42");
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "twice=42\n");
}

TEST_CASE("stepIn through a PLT stub stops in the shared library's function, bound or not yet bound") {
  Session s;
  auto stop = runTo(s, "shlib", "shlib_call");
  // The first call: the dynamic linker has not bound the GOT slot yet (lazy binding).
  ok(s.debugger.stepIn(stop.tid));
  auto in = s.stop();
  CHECK(in.reason == DebuggerStopReason::Step);
  auto frame = s.top(in.tid);
  CHECK(frame.name == "shlib_triple");
  CHECK(frame.line == lineOf(kShlibSource, "shlib_body"));
  CHECK(s.local(frame.id, "v") == "7");

  ok(s.debugger.stepOut(in.tid));
  auto out = s.stop();
  CHECK(s.top(out.tid).name == "shlib");
  ok(s.debugger.next(out.tid));
  auto again = s.stop();
  CHECK(s.top(again.tid).line == lineOf(kSource, "shlib_again"));

  // The second call: the slot is bound now.
  ok(s.debugger.stepIn(again.tid));
  auto second = s.stop();
  auto callee = s.top(second.tid);
  CHECK(callee.name == "shlib_triple");
  CHECK(callee.line == lineOf(kShlibSource, "shlib_body"));
  CHECK(s.local(callee.id, "v") == "1");
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "shlib=24\n");
}

TEST_CASE("stepIn through a shared library's own PLT stub (a call to its own global function) stops in the callee") {
  Session s;
  s.launch({"shlib_inner"});
  ok(s.debugger.setSourceBreakpoints(kShlibSource, {SourceBreakpoint{lineOf(kShlibSource, "shlib_inner_call")}}));
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  REQUIRE(stop.reason == DebuggerStopReason::Breakpoint);
  // Not bound yet: the definition is the library's own.
  ok(s.debugger.stepIn(stop.tid));
  auto in = s.stop();
  auto frame = s.top(in.tid);
  CHECK(frame.name == "shlib_triple");
  CHECK(frame.line == lineOf(kShlibSource, "shlib_body"));
  CHECK(s.local(frame.id, "v") == "2");
  ok(s.debugger.stepOut(in.tid));
  auto out = s.stop();
  CHECK(s.top(out.tid).name == "shlib_nine");
  ok(s.debugger.next(out.tid));
  auto again = s.stop();
  CHECK(s.top(again.tid).line == lineOf(kShlibSource, "shlib_inner_again"));
  // Bound now, to the library itself.
  ok(s.debugger.stepIn(again.tid));
  auto second = s.stop();
  auto callee = s.top(second.tid);
  CHECK(callee.name == "shlib_triple");
  CHECK(s.local(callee.id, "v") == "6");
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "nine=18\n");
}

TEST_CASE("next over a recursive call stays in the frame it started in") {
  Session s;
  auto stop = runTo(s, "recurse", "recurse_call", "n == 3");
  auto before = ok(s.debugger.stackTrace(stop.tid, 0, 1));
  ok(s.debugger.next(stop.tid));
  auto stepped = s.stop();
  CHECK(stepped.reason == DebuggerStopReason::Step);
  auto after = ok(s.debugger.stackTrace(stepped.tid, 0, 1));
  REQUIRE(after.frames.size() == 1);
  CHECK(after.frames[0].name == "depth_of");
  CHECK(after.frames[0].line > lineOf(kSource, "recurse_call"));
  CHECK(after.totalFrames == before.totalFrames);
  CHECK(s.local(after.frames[0].id, "n") == "3");
  ok(s.debugger.terminate());
}

TEST_CASE("a 1000-deep recursion pages with totalFrames and per-frame locals") {
  Session s;
  auto stop = runTo(s, "recurse", "recurse_base", "n == 0");
  auto page = ok(s.debugger.stackTrace(stop.tid, 0, 20));
  CHECK(page.totalFrames >= 1003);
  REQUIRE(page.frames.size() == 20);
  CHECK(page.frames[0].name == "depth_of");
  CHECK(page.frames[0].line == lineOf(kSource, "recurse_base"));
  CHECK(s.local(page.frames[0].id, "n") == "0");
  CHECK(s.local(page.frames[7].id, "n") == "7");

  auto deep = ok(s.debugger.stackTrace(stop.tid, 995, 20));
  REQUIRE(deep.frames.size() >= 6);
  CHECK(deep.totalFrames == page.totalFrames);
  CHECK(s.local(deep.frames[0].id, "n") == "995");
  bool sawMain = false;
  for (auto& f : deep.frames) sawMain |= f.name == "main";
  CHECK(sawMain);
  // Frames past the end: an empty page, not an error.
  CHECK(ok(s.debugger.stackTrace(stop.tid, page.totalFrames + 5, 10)).frames.empty());
  ok(s.debugger.setSourceBreakpoints(kSource, {}));
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "depth=1000\n");
}

TEST_CASE("a crash stops with its description and the locals stay inspectable") {
  Session s;
  s.launch({"crash"});
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  CHECK(stop.reason == DebuggerStopReason::Exception);
  CHECK(stop.description.find("SIGSEGV") != std::string::npos);
  auto frame = s.top(stop.tid);
  CHECK(frame.name == "crash");
  CHECK(frame.line == lineOf(kSource, "crash_line"));
  CHECK(s.local(frame.id, "victim") == "42");
  ok(s.debugger.terminate());
}

TEST_CASE("detach removes the breakpoints and the program runs on to its normal output") {
  Session s;
  auto stop = runTo(s, "slow", "slow_line");
  CHECK(ok(s.debugger.evaluate("global_counter", 0)).value == "7");
  ok(s.debugger.detach());
  CHECK(s.output() == "slow done 37\n");
}

TEST_CASE("setVariable, memory reads and writes, instruction stepping") {
  Session s;
  auto stop = runTo(s, "basic", "square_body");
  auto frame = s.top(stop.tid);
  auto scopes = ok(s.debugger.scopes(frame.id));
  auto set = ok(s.debugger.setVariable(scopes[0].variablesReference, "v", "5"));
  CHECK(set.value == "5");
  auto address = ok(s.debugger.evaluate("&v", frame.id));
  std::uint64_t at = std::stoull(address.value.substr(0, address.value.find(' ')), nullptr, 16);
  auto bytes = ok(s.debugger.readMemory(at, 4));
  CHECK(bytes == std::vector<std::uint8_t>{5, 0, 0, 0});
  ok(s.debugger.writeMemory(at, {6, 0, 0, 0}));
  CHECK(ok(s.debugger.evaluate("v", frame.id)).value == "6");

  ok(s.debugger.next(stop.tid, StepGranularity::Instruction));
  auto stepped = s.stop();
  CHECK(stepped.reason == DebuggerStopReason::Step);
  auto after = s.top(stepped.tid);
  CHECK(after.pc != frame.pc);
  CHECK(after.line == frame.line);

  ok(s.debugger.setSourceBreakpoints(kSource, {}));
  ok(s.debugger.resume());
  CHECK(s.exit().exitCode == 0);
  CHECK(s.output() == "total=52\n");  // 6*6 + 4*4
}

TEST_CASE("instruction next runs over a call to the instruction after it; instruction stepIn enters it") {
  Session s;
  auto stop = runTo(s, "basic", "call_square");
  // Step by instruction up to the call on this line.
  FrameEntry frame = s.top(stop.tid);
  DisassembledInstruction call;
  for (int i = 0; i < 20; ++i) {
    auto ins = ok(s.debugger.disassemble(frame.pc, 1));
    REQUIRE(!ins.empty());
    if (ins[0].instruction.rfind("call", 0) == 0) {
      call = ins[0];
      break;
    }
    ok(s.debugger.next(stop.tid, StepGranularity::Instruction));
    stop = s.stop();
    frame = s.top(stop.tid);
  }
  REQUIRE(call.address == frame.pc);
  std::uint64_t length = (call.bytes.size() + 1) / 3;

  ok(s.debugger.next(stop.tid, StepGranularity::Instruction));
  auto over = s.stop();
  CHECK(over.reason == DebuggerStopReason::Step);
  auto after = s.top(over.tid);
  CHECK(after.name == "add_squares");
  CHECK(after.pc == call.address + length);

  // Back to the same call on the next line, then into it.
  ok(s.debugger.next(over.tid));
  auto line = s.stop();
  frame = s.top(line.tid);
  for (int i = 0; i < 20; ++i) {
    auto ins = ok(s.debugger.disassemble(frame.pc, 1));
    if (ins[0].instruction.rfind("call", 0) == 0) break;
    ok(s.debugger.stepIn(line.tid, StepGranularity::Instruction));
    line = s.stop();
    frame = s.top(line.tid);
  }
  ok(s.debugger.stepIn(line.tid, StepGranularity::Instruction));
  auto in = s.stop();
  CHECK(s.top(in.tid).name == "square");
  ok(s.debugger.terminate());
}

TEST_CASE("attach by pid shows the running program's stack, detach lets it finish untouched") {
  int out[2];
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(out[1], 1);
    execl(STRATA_DBG_TARGET, STRATA_DBG_TARGET, "slow", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  usleep(100000);
  {
    Session s;
    ok(s.debugger.attach(child));
    ok(s.debugger.configurationDone(true));
    auto stop = s.stop();
    CHECK(stop.reason == DebuggerStopReason::Attach);
    auto page = ok(s.debugger.stackTrace(child, 0, 0));
    bool sawSlow = false;
    for (auto& f : page.frames) sawSlow |= f.name == "slow" && f.file.ends_with("debuggee.c");
    CHECK(sawSlow);
    CHECK(page.frames.size() == page.totalFrames);
    ok(s.debugger.detach());
  }
  std::string text;
  char buf[256];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  close(out[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(text == "slow done 37\n");
}
