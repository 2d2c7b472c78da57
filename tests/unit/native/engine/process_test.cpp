// Programs that fork or exec under the engine.
#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

TEST_CASE("a forked child runs free of the parent's breakpoints") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  pid_t pid = ok(engine.launch({.program = FORKER_PATH, .stdoutFd = out.writeEnd()}));
  sink.stop();
  std::uint64_t work = runtimeAddress(sink, FORKER_PATH, "work");
  ok(engine.addBreakpoint(work));
  ok(engine.resume());
  std::vector<unsigned long long> args;
  for (int i = 0; i < 2; ++i) {
    EngineStop hit = sink.stop();
    REQUIRE(hit.reason == EngineStopReason::Breakpoint);
    CHECK(hit.tid == pid);  // the child's work(10) is not ours
    args.push_back(ok(engine.registers(pid)).gpr.rdi);
    ok(engine.resume());
  }
  CHECK(args == std::vector<unsigned long long>{1, 2});
  CHECK(sink.exit().exitCode == 0);
  CHECK(out.readAll() == "child work=20\nparent work=2,4 child exit=0\n");
}

TEST_CASE("exec replaces the image: an exec stop, the new program's objects, then its exit") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  ok(engine.launch({.program = "/bin/sh", .args = {"-c", std::string("exec ") + HELLO_PATH}, .stdoutFd = out.writeEnd()}));
  CHECK(sink.stop().reason == EngineStopReason::Entry);
  ok(engine.resume());
  EngineStop exec = sink.stop();
  CHECK(exec.reason == EngineStopReason::Exec);
  auto objects = ok(engine.loadedObjects());
  REQUIRE_FALSE(objects.empty());
  CHECK(objects[0].path == HELLO_PATH);
  // Breakpoints work in the new image.
  ok(engine.addBreakpoint(runtimeAddress(sink, HELLO_PATH, "factorial")));
  ok(engine.resume());
  CHECK(sink.stop().reason == EngineStopReason::Breakpoint);
  ok(engine.kill());
  CHECK(sink.exit().signal == SIGKILL);
}
