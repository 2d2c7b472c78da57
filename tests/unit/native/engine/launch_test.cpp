// Launch, entry stop, exit codes, launch errors and single-instruction steps.
#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

TEST_CASE("launch runs to completion and reports the exit code and output") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = HELLO_PATH, .stdoutFd = out.writeEnd()}));
  CHECK(pid > 0);
  EngineStop entry = sink.stop();
  CHECK(entry.reason == EngineStopReason::Entry);
  CHECK(entry.pid == pid);
  CHECK(entry.tid == pid);
  ok(engine.resume());
  ExitEvent exit = sink.exit();
  CHECK(exit.pid == pid);
  CHECK_FALSE(exit.signaled);
  CHECK(exit.exitCode == 7);
  CHECK(exit.description == "exited with code 7");
  CHECK(out.readAll() == "sum=10\nfactorial=120\n");
  CHECK(engine.pid() == 0);
}

TEST_CASE("the entry stop comes before any code of the program ran") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  EngineStop entry = sink.stop();
  REQUIRE(entry.reason == EngineStopReason::Entry);
  // The first instruction is the dynamic linker's: pc lies in ld.so, not in the program.
  auto ld = sink.object("ld-linux-x86-64.so.2");
  REQUIRE(ld.has_value());
  auto exe = sink.object("/engine_target_hello");
  REQUIRE(exe.has_value());
  CHECK(exe->loadBias != 0);  // PIE
  auto objects = ok(engine.loadedObjects());
  REQUIRE(objects.size() == 2);
  CHECK(objects[0].path == exe->path);
  CHECK(entry.pc >= ld->loadBias);
  CHECK(entry.pc < ld->loadBias + 0x100000);
  auto threads = ok(engine.threads());
  REQUIRE(threads.size() == 1);
  CHECK(threads[0].tid == pid);
  CHECK(threads[0].name == "engine_target_h");  // comm is 15 characters at most
  ok(engine.kill());
  ExitEvent exit = sink.exit();
  CHECK(exit.signaled);
  CHECK(exit.signal == SIGKILL);
  CHECK(exit.description == "killed by SIGKILL");
}

TEST_CASE("launch errors say what failed") {
  RecordingSink sink;
  Engine engine(sink);
  auto missing = engine.launch({.program = "/nonexistent/program"}).get();
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "launch /nonexistent/program: No such file or directory");
  auto badCwd = engine.launch({.program = HELLO_PATH, .cwd = "/nonexistent-dir"}).get();
  REQUIRE_FALSE(badCwd.ok());
  CHECK(badCwd.error().message ==
        std::string("launch ") + HELLO_PATH + ": chdir to /nonexistent-dir: No such file or directory");
  CHECK(engine.pid() == 0);
  auto resume = engine.resume().get();
  REQUIRE_FALSE(resume.ok());
  CHECK(resume.error().message == "no process is being debugged");
}

TEST_CASE("args, cwd and environment reach the program") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = "/bin/sh",
                    .args = {"-c", "echo \"$0 $STRATA_X $(pwd)\"", "first"},
                    .cwd = "/tmp",
                    .env = std::vector<std::string>{"STRATA_X=yes", "PATH=/usr/bin:/bin"},
                    .stdoutFd = out.writeEnd()}));
  CHECK(sink.stop().reason == EngineStopReason::Entry);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);
  CHECK(out.readAll() == "first yes /tmp\n");
}

TEST_CASE("stepInstruction moves one instruction and reports a step stop") {
  RecordingSink sink;
  Engine engine(sink);
  pid_t pid = ok(engine.launch({.program = HELLO_PATH}));
  sink.stop();
  std::uint64_t add = runtimeAddress(sink, HELLO_PATH, "add");
  ok(engine.addBreakpoint(add));
  ok(engine.resume());
  EngineStop hit = sink.stop();
  REQUIRE(hit.reason == EngineStopReason::Breakpoint);
  CHECK(hit.pc == add);
  ok(engine.stepInstruction(pid));
  EngineStop step = sink.stop();
  CHECK(step.reason == EngineStopReason::Step);
  CHECK(step.pc == add + 1);  // push %rbp is one byte (-O0 without endbr64 here)
  auto regs = ok(engine.registers(pid));
  CHECK(regs.gpr.rip == add + 1);
  CHECK(regs.hasFpr);
  ok(engine.kill());
  sink.exit();
}

TEST_CASE("registers written at a stop change what the program computes") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = HELLO_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  BreakpointId id = ok(engine.addBreakpoint(runtimeAddress(sink, HELLO_PATH, "add")));
  ok(engine.resume());
  REQUIRE(sink.stop().reason == EngineStopReason::Breakpoint);
  ok(engine.removeBreakpoint(id));
  strata::native::ThreadRegisters regs = ok(engine.registers(pid));
  REQUIRE(regs.gpr.rdi == 0);  // add(sum = 0, i = 0)
  regs.gpr.rdi = 1000;
  ok(engine.setRegisters(regs));  // with the FP registers read above: a round trip
  CHECK(ok(engine.registers(pid)).gpr.rdi == 1000);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 7);
  CHECK(out.readAll() == "sum=1010\nfactorial=120\n");
}

TEST_CASE("a launched program does not inherit the debugger's ignored signals") {
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(sigaction(SIGPIPE, &ignore, &previous) == 0);  // as adapters commonly do
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = "/bin/sh", .args = {"-c", "grep SigIgn /proc/$$/status"}, .stdoutFd = out.writeEnd()}));
  sink.stop();
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);
  CHECK(out.readAll() == "SigIgn:\t0000000000000000\n");
  sigaction(SIGPIPE, &previous, nullptr);
}
