// Software breakpoints: hits, conditions, shared sites, hidden int3 bytes, step-out, detach.
#include <fcntl.h>
#include <atomic>
#include <unistd.h>

#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

namespace {

std::uint8_t rawByte(pid_t pid, std::uint64_t address) {
  int fd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  std::uint8_t b = 0;
  REQUIRE(pread(fd, &b, 1, static_cast<off_t>(address)) == 1);
  close(fd);
  return b;
}

}  // namespace

TEST_CASE("a breakpoint by address stops on every call with the caller's arguments") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  BreakpointId id = ok(engine.addBreakpoint(add));
  ok(engine.resume());
  int sum = 0;
  for (int i = 0; i < 5; ++i) {
    EngineStop hit = sink.stop();
    REQUIRE(hit.reason == EngineStopReason::Breakpoint);
    CHECK(hit.pc == add);
    CHECK(hit.tid == pid);
    REQUIRE(hit.breakpoints == std::vector<BreakpointId>{id});
    auto regs = ok(engine.registers(pid));
    CHECK(regs.gpr.rip == add);
    CHECK(regs.gpr.rdi == static_cast<unsigned long long>(sum));
    CHECK(regs.gpr.rsi == static_cast<unsigned long long>(i));
    sum += i;
    ok(engine.resume());
  }
  CHECK(sink.exit().exitCode == 7);
}

TEST_CASE("memory reads hide the int3 of an inserted breakpoint") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t link = ok(elfSymbol(HELLO_PATH, "add"));
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  std::string expected = ok(elfBytes(HELLO_PATH, link, 16));
  REQUIRE(static_cast<std::uint8_t>(expected[0]) != 0xCC);
  ok(engine.addBreakpoint(add));
  ok(engine.addBreakpoint(add + 4));
  CHECK(rawByte(pid, add) == 0xCC);  // really inserted
  CHECK(rawByte(pid, add + 4) == 0xCC);
  std::string seen(16, '\0');
  ok(engine.memory().read(add, seen.data(), seen.size()));
  CHECK(seen == expected);
  // A write over a breakpoint keeps the int3 and changes what it restores.
  std::uint8_t same = static_cast<std::uint8_t>(expected[4]);
  ok(engine.memory().write(add + 4, &same, 1));
  CHECK(rawByte(pid, add + 4) == 0xCC);
  ok(engine.memory().read(add, seen.data(), seen.size()));
  CHECK(seen == expected);
  ok(engine.kill());
  sink.exit();
}

TEST_CASE("conditions run in the engine: false ones never stop, hit counts are exact") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  std::vector<std::uint64_t> seenCounts;
  BreakpointId id = ok(engine.addBreakpoint(add, [&](const HitContext& ctx) {
    seenCounts.push_back(ctx.hitCount);
    return ctx.registers->gpr.rsi == 3;
  }));
  ok(engine.resume());
  EngineStop hit = sink.stop();
  REQUIRE(hit.reason == EngineStopReason::Breakpoint);
  CHECK(hit.breakpoints == std::vector<BreakpointId>{id});
  CHECK(ok(engine.registers(pid)).gpr.rsi == 3);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 7);
  CHECK(seenCounts == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("breakpoints share one site; disabling one keeps the other, removing both restores the byte") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  std::uint8_t original = 0;
  ok(engine.memory().read(add, &original, 1));
  BreakpointId a = ok(engine.addBreakpoint(add));
  BreakpointId b = ok(engine.addBreakpoint(add));
  CHECK(a != b);
  ok(engine.resume());
  EngineStop first = sink.stop();
  CHECK(first.breakpoints == std::vector<BreakpointId>{a, b});
  ok(engine.enableBreakpoint(a, false));
  ok(engine.resume());
  EngineStop second = sink.stop();
  CHECK(second.breakpoints == std::vector<BreakpointId>{b});
  ok(engine.removeBreakpoint(b));
  CHECK(rawByte(pid, add) == original);  // a is disabled: nobody wants the site
  ok(engine.enableBreakpoint(a, true));
  CHECK(rawByte(pid, add) == 0xCC);
  ok(engine.removeBreakpoint(a));
  CHECK(rawByte(pid, add) == original);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 7);
}

TEST_CASE("step out returns to the caller of the frame, not of a deeper recursive one") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t fact = runtimeAddress(sink, HELLO_PATH, "factorial");
  std::uint64_t mainStart = runtimeAddress(sink, HELLO_PATH, "main");
  BreakpointId id = ok(engine.addBreakpoint(fact));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
  CHECK(ok(engine.registers(pid)).gpr.rdi == 5);
  ok(engine.removeBreakpoint(id));
  ok(engine.stepOut(pid));
  EngineStop out = sink.stop();
  REQUIRE(out.reason == EngineStopReason::StepOut);
  auto regs = ok(engine.registers(pid));
  CHECK(regs.gpr.rax == 120);  // the outermost call's result: every inner return was skipped
  CHECK(out.pc > mainStart);
  CHECK(out.pc < mainStart + 0x100);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 7);
}

TEST_CASE("detach after breakpoints leaves the program running exactly as without a debugger") {
  auto [plainOut, plainCode] = runPlain(HELLO_PATH);
  REQUIRE(plainOut == "sum=10\nfactorial=120\n");
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = HELLO_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  std::uint64_t fact = runtimeAddress(sink, HELLO_PATH, "factorial");
  ok(engine.addBreakpoint(add));
  ok(engine.addBreakpoint(fact));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);  // stopped on add's int3, pc rewound
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
  ok(engine.detach());
  CHECK(engine.pid() == 0);
  ExitEvent exit = sink.exit();  // a launched child is still reaped and reported
  CHECK(exit.exitCode == plainCode);
  CHECK(out.readAll() == plainOut);
}

TEST_CASE("a sink may resume from inside onStopped") {
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  int hits = 0;
  sink.onStoppedHook = [&](const EngineStop& e) {
    if (e.reason == EngineStopReason::Breakpoint && ++hits < 5) REQUIRE(engine.resume().get().ok());
  };
  ok(engine.addBreakpoint(runtimeAddress(sink, HELLO_PATH, "add")));
  ok(engine.resume());
  for (int i = 0; i < 5; ++i) CHECK(sink.stop().reason == EngineStopReason::Breakpoint);
  CHECK(hits == 5);
  ok(engine.resume());  // only the fifth stop is left for the test to resume
  CHECK(sink.exit().exitCode == 7);
}

TEST_CASE("stepRange leaves a function through its return, stepping into nothing else") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  auto add = ok(elfSymbolEntry(HELLO_PATH, "add"));
  std::uint64_t addStart = runtimeAddress(sink, HELLO_PATH, "add");
  std::uint64_t mainStart = runtimeAddress(sink, HELLO_PATH, "main");
  BreakpointId id = ok(engine.addBreakpoint(addStart));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
  ok(engine.removeBreakpoint(id));
  ok(engine.stepRange(pid, addStart, addStart + add.size, false));
  EngineStop step = sink.stop();
  CHECK(step.reason == EngineStopReason::Step);
  CHECK(step.pc > mainStart);  // back in main, right after the call
  CHECK(step.pc < mainStart + 0x80);
  CHECK(ok(engine.registers(pid)).gpr.rax == 0);  // add(0, 0)
  ok(engine.kill());
  sink.exit();
}

TEST_CASE("stepRange over calls runs printf and the whole recursion at full speed") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = HELLO_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  auto main = ok(elfSymbolEntry(HELLO_PATH, "main"));
  std::uint64_t mainStart = runtimeAddress(sink, HELLO_PATH, "main");
  std::uint64_t fact = runtimeAddress(sink, HELLO_PATH, "factorial");
  std::atomic<int> factorialCalls{0};
  ok(engine.addBreakpoint(fact, [&](const HitContext&) {
    ++factorialCalls;
    return false;
  }));
  BreakpointId atMain = ok(engine.addBreakpoint(mainStart));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
  ok(engine.removeBreakpoint(atMain));
  // All of main as one "line": every call in it is stepped over, so the step ends only when
  // main returns into the C library.
  ok(engine.stepRange(pid, mainStart, mainStart + main.size, true));
  EngineStop step = sink.stop();
  CHECK(step.reason == EngineStopReason::Step);
  CHECK((step.pc < mainStart || step.pc >= mainStart + main.size));
  CHECK(ok(engine.registers(pid)).gpr.rax == 7);  // main's return value
  CHECK(factorialCalls == 5);  // the recursion ran (and its conditions were asked) at full speed
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 7);
  CHECK(out.readAll() == "sum=10\nfactorial=120\n");
}

TEST_CASE("step out to an explicit return target") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t fact = runtimeAddress(sink, HELLO_PATH, "factorial");
  BreakpointId id = ok(engine.addBreakpoint(fact));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);  // factorial(5), called from main
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);  // factorial(4), called from factorial(5)
  auto regs = ok(engine.registers(pid));
  REQUIRE(regs.gpr.rdi == 4);
  ok(engine.removeBreakpoint(id));
  // At the first instruction: the return address is on top of the stack.
  std::uint64_t ret = 0;
  ok(engine.memory().read(regs.gpr.rsp, &ret, sizeof ret));
  CHECK(ret > fact);  // inside factorial itself
  ok(engine.stepOut(pid, ReturnTarget{ret, regs.gpr.rsp + 8}));
  EngineStop out = sink.stop();
  REQUIRE(out.reason == EngineStopReason::StepOut);
  CHECK(out.pc == ret);
  auto after = ok(engine.registers(pid));
  CHECK(after.gpr.rax == 24);  // factorial(4), not factorial(1) returning to the same address
  CHECK(after.gpr.rsp == regs.gpr.rsp + 8);
  ok(engine.kill());
  sink.exit();
}
