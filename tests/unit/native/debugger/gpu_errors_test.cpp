// Sticky CUDA errors through NativeDebugger (suite "cuda"): the debuggee loads the built
// libstrata_cupti.so and calls its strata_gpu_error_stop as the collector does; the facade's
// hidden breakpoint makes that an Exception stop with the struct read from the target, the
// stack from the program's call, the stop switchable, and nothing left behind by a detach.
#include "harness.hpp"

using namespace strata::native::debugger;
using namespace strata::native::debugger::testing;

namespace {
const std::string kProgram = STRATA_CUDA_ERROR_PROGRAM;
const std::string kCudaSource = STRATA_CUDA_ERROR_SRC;
}  // namespace

TEST_CASE("a sticky CUDA error stops as an exception at the program's call, with the collector's struct" *
          doctest::test_suite("cuda")) {
  Session s;
  s.launch({"stop"}, kProgram);
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  CHECK(stop.reason == DebuggerStopReason::Exception);
  CHECK(stop.hitBreakpointIds.empty());
  REQUIRE(stop.gpuError.has_value());
  const GpuErrorStop& g = *stop.gpuError;
  CHECK(g.api == "cudaDeviceSynchronize");
  CHECK(g.error == "cudaErrorIllegalAddress");
  CHECK(g.result == 700);
  CHECK(g.domain == 2);
  CHECK(g.cbid == 165);
  CHECK(g.threadId == static_cast<std::uint32_t>(stop.tid));
  CHECK(g.lastKernel == "fill(int*, int)");  // demangled
  CHECK(g.lastCorrelation == 7);
  CHECK(g.lastSite == 3);
  CHECK(g.message ==
        "cudaDeviceSynchronize returned cudaErrorIllegalAddress (700): a kernel accessed memory it may not; the CUDA "
        "context can no longer be used; last kernel launched on this thread: fill(int*, int)");
  CHECK(stop.description == g.message);
  CHECK(g.callerPc != 0);
  CHECK(stop.pc == g.callerPc);
  auto page = ok(s.debugger.stackTrace(stop.tid, 0, 0));
  REQUIRE(!page.frames.empty());
  CHECK(page.frames[0].name == "main");
  CHECK(page.frames[0].file == kCudaSource);
  CHECK(page.frames[0].line == lineOf(kCudaSource, "first_call"));
  CHECK(page.frames[0].pc == g.callerPc);
  for (const auto& f : page.frames) CHECK(f.name.find("fake_synchronize") == std::string::npos);

  ok(s.debugger.resume());
  auto second = s.stop();
  REQUIRE(second.gpuError.has_value());
  CHECK(second.gpuError->error == "cudaErrorLaunchFailure");
  CHECK(second.gpuError->result == 719);
  CHECK(s.top(second.tid).line == lineOf(kCudaSource, "second_call"));
  ok(s.debugger.resume());
  auto exit = s.exit();
  CHECK_FALSE(exit.signaled);
  CHECK(exit.exitCode == 0);
  CHECK(s.output() == "after the first error: 700\nafter the second error: 719\n");
}

TEST_CASE("with CUDA error stops off the program runs through its errors" * doctest::test_suite("cuda")) {
  Session s;
  s.launch({"stop"}, kProgram);
  ok(s.debugger.setGpuErrorStops(false));
  ok(s.debugger.configurationDone(false));
  auto exit = s.exit();
  CHECK_FALSE(exit.signaled);
  CHECK(exit.exitCode == 0);
  CHECK(s.output() == "after the first error: 700\nafter the second error: 719\n");
}

TEST_CASE("detach takes the hidden breakpoint away: the program meets its errors undisturbed" *
          doctest::test_suite("cuda")) {
  Session s;
  s.launch({"stop"}, kProgram);
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  REQUIRE(stop.gpuError.has_value());
  ok(s.debugger.detach());
  // An int3 left in strata_gpu_error_stop would kill it with SIGTRAP before its last line.
  CHECK(s.output() == "after the first error: 700\nafter the second error: 719\n");
}
