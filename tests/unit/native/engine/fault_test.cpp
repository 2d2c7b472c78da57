// Crashes stop with the signal's details; watchpoints name their slot; other signals pass through.
#include <cstdio>

#include "../hardware_suite.hpp"
#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

TEST_CASE("a SIGSEGV stops with signal, code, fault address and description; resuming lets it die") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = CRASH_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t mainStart = runtimeAddress(sink, CRASH_PATH, "main");
  ok(engine.resume());
  EngineStop crash = sink.stop();
  REQUIRE(crash.reason == EngineStopReason::Exception);
  CHECK(crash.tid == pid);
  CHECK(crash.signal.signo == SIGSEGV);
  CHECK(crash.signal.code == SEGV_MAPERR);
  CHECK(crash.signal.faultAddress == 0);
  CHECK(crash.signal.description == "SIGSEGV: address not mapped to object at 0x0");
  CHECK(crash.pc > mainStart);
  CHECK(crash.pc < mainStart + 0x80);
  ok(engine.resume());
  ExitEvent exit = sink.exit();
  CHECK(exit.signaled);
  CHECK(exit.signal == SIGSEGV);
  CHECK(out.readAll() == "about to crash\n");
}

TEST_CASE("SIGFPE and SIGABRT stop with their descriptions") {
  RecordingSink sink;
  Engine engine(sink);
  SUBCASE("integer division by zero") {
    pid_t pid = ok(engine.launch({.program = FAULTS_PATH, .args = {"fpe"}}));
    sink.stop();
    ok(engine.resume());
    EngineStop fault = sink.stop();
    REQUIRE(fault.reason == EngineStopReason::Exception);
    CHECK(fault.signal.signo == SIGFPE);
    CHECK(fault.signal.code == FPE_INTDIV);
    CHECK(fault.signal.faultAddress == fault.pc);  // the dividing instruction itself
    char expected[80];
    std::snprintf(expected, sizeof expected, "SIGFPE: integer divide by zero at 0x%llx",
                  static_cast<unsigned long long>(fault.pc));
    CHECK(fault.signal.description == expected);
    CHECK(ok(engine.registers(pid)).gpr.rip == fault.pc);
    ok(engine.resume());
    ExitEvent exit = sink.exit();
    CHECK(exit.signaled);
    CHECK(exit.signal == SIGFPE);
  }
  SUBCASE("abort") {
    ok(engine.launch({.program = FAULTS_PATH, .args = {"abort"}}));
    sink.stop();
    ok(engine.resume());
    EngineStop fault = sink.stop();
    REQUIRE(fault.reason == EngineStopReason::Exception);
    CHECK(fault.signal.signo == SIGABRT);
    CHECK(fault.signal.code == SI_TKILL);
    CHECK(fault.signal.description == "SIGABRT: aborted (sent by tkill)");
    ok(engine.resume());
    CHECK(sink.exit().signal == SIGABRT);
  }
}

TEST_CASE("watchpoint arguments and slots are checked without the hardware firing") {
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.launch({.program = WATCH_PATH}));
  sink.stop();
  std::uint64_t watched = runtimeAddress(sink, WATCH_PATH, "watched");
  auto misaligned = engine.addWatchpoint(watched + 1, 8, WatchKind::Write).get();
  REQUIRE_FALSE(misaligned.ok());
  CHECK(misaligned.error().message == "watchpoint: the address must be aligned to its size (8 bytes)");
  auto badSize = engine.addWatchpoint(watched, 3, WatchKind::Write).get();
  REQUIRE_FALSE(badSize.ok());
  CHECK(badSize.error().message == "watchpoint: size must be 1, 2, 4 or 8 bytes, not 3");
  for (int slot = 0; slot < 4; ++slot) CHECK(ok(engine.addWatchpoint(watched + slot, 1, WatchKind::Write)) == slot);
  auto full = engine.addWatchpoint(watched, 8, WatchKind::ReadWrite).get();
  REQUIRE_FALSE(full.ok());
  CHECK(full.error().message == "watchpoint: all four hardware debug registers are in use");
  ok(engine.removeWatchpoint(2));
  auto again = engine.removeWatchpoint(2).get();
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message == "watchpoint: slot 2 is not in use");
  auto noSlot = engine.removeWatchpoint(4).get();
  REQUIRE_FALSE(noSlot.ok());
  CHECK(noSlot.error().message == "watchpoint: no slot 4");
  CHECK(ok(engine.addWatchpoint(watched, 8, WatchKind::Write)) == 2);  // the freed slot is reused
  ok(engine.kill());
  sink.exit();
}

TEST_CASE("hardware watchpoints fire on writes with the right slot, and stop firing when removed" *
          doctest::test_suite(kHardwareSuite)) {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = WATCH_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t watched = runtimeAddress(sink, WATCH_PATH, "watched");
  std::uint64_t other = runtimeAddress(sink, WATCH_PATH, "other");
  std::uint64_t change = runtimeAddress(sink, WATCH_PATH, "change");
  int watchedSlot = ok(engine.addWatchpoint(watched, 8, WatchKind::Write));
  int otherSlot = ok(engine.addWatchpoint(other, 8, WatchKind::Write));
  CHECK(watchedSlot == 0);
  CHECK(otherSlot == 1);
  ok(engine.resume());
  EngineStop first = sink.stop();
  REQUIRE(first.reason == EngineStopReason::Watchpoint);
  CHECK(first.watchpointSlot == otherSlot);
  CHECK(first.watchAddress == other);
  long value = 0;
  ok(engine.memory().read(other, &value, sizeof value));
  CHECK(value == 1);
  ok(engine.removeWatchpoint(otherSlot));
  ok(engine.resume());
  EngineStop second = sink.stop();
  REQUIRE(second.reason == EngineStopReason::Watchpoint);
  CHECK(second.tid == pid);
  CHECK(second.watchpointSlot == watchedSlot);
  CHECK(second.watchAddress == watched);
  CHECK(second.pc > change);
  CHECK(second.pc < change + 0x40);
  ok(engine.memory().read(watched, &value, sizeof value));
  CHECK(value == 42);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);  // other = 2 came and went unreported
  CHECK(out.readAll() == "watched=42 before=5\n");
}

TEST_CASE("a read/write watchpoint fires on a read" * doctest::test_suite(kHardwareSuite)) {
  RecordingSink sink;
  Engine engine(sink);
  ok(engine.launch({.program = WATCH_PATH}));
  sink.stop();
  std::uint64_t watched = runtimeAddress(sink, WATCH_PATH, "watched");
  std::uint64_t mainStart = runtimeAddress(sink, WATCH_PATH, "main");
  int slot = ok(engine.addWatchpoint(watched, 4, WatchKind::ReadWrite));
  ok(engine.resume());
  EngineStop read = sink.stop();
  REQUIRE(read.reason == EngineStopReason::Watchpoint);
  CHECK(read.watchpointSlot == slot);
  CHECK(read.pc > mainStart);  // `long before = watched;` in main
  CHECK(read.pc < mainStart + 0x40);
  ok(engine.kill());
  sink.exit();
}

TEST_CASE("signals the program handles pass through without stopping") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = SIGNALS_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  ok(engine.resume());
  ExitEvent exit = sink.exit();
  CHECK(exit.exitCode == 0);
  CHECK(sink.usr1Signals == 3);
  CHECK(out.readAll() == "handled SIGUSR1 3 times\n");
}
