// Shared libraries: the rendezvous reports dlopen/dlclose; breakpoints set at the load stop hit.
#include "support.hpp"

using namespace strata::native::engine;
using namespace strata::native::engine::testing;

TEST_CASE("a dlopened library is reported and a breakpoint inserted at that stop is hit") {
  RecordingSink sink;
  Engine engine(sink);
  Capture out;
  std::uint64_t computeLink = ok(elfSymbol(PLUGIN_PATH, "plugin_compute"));
  std::uint64_t initLink = ok(elfSymbol(PLUGIN_PATH, "plugin_init"));
  std::uint64_t compute = 0, init = 0;
  BreakpointId id = 0, initId = 0;
  bool libcKnownFirst = false;
  std::vector<std::string> removed;
  sink.onLibrariesHook = [&](const LibraryEvent& ev) {
    for (auto& o : ev.added) {
      if (o.path != PLUGIN_PATH) continue;
      libcKnownFirst = sink.object("/libc.so.6").has_value();
      compute = o.loadBias + computeLink;
      init = o.loadBias + initLink;
      // On the engine thread with the process stopped: this runs now, before the library's
      // constructor or any other of its code.
      auto r = engine.addBreakpoint(compute).get();
      REQUIRE(r.ok());
      id = *r;
      auto i = engine.addBreakpoint(init).get();
      REQUIRE(i.ok());
      initId = *i;
    }
    for (auto& o : ev.removed) removed.push_back(o.path);
  };
  pid_t pid = ok(engine.launch({.program = DLOPEN_PATH, .args = {PLUGIN_PATH}, .stdoutFd = out.writeEnd()}));
  REQUIRE(sink.stop().reason == EngineStopReason::Entry);
  CHECK_FALSE(sink.object("/libc.so.6").has_value());  // not mapped yet at the first instruction
  ok(engine.resume());
  EngineStop ctor = sink.stop();
  REQUIRE(ctor.reason == EngineStopReason::Breakpoint);
  CHECK(ctor.breakpoints == std::vector<BreakpointId>{initId});
  CHECK(ctor.pc == init);
  ok(engine.resume());
  EngineStop hit = sink.stop();
  REQUIRE(hit.reason == EngineStopReason::Breakpoint);
  CHECK(id != 0);
  CHECK(hit.breakpoints == std::vector<BreakpointId>{id});
  CHECK(hit.pc == compute);
  CHECK(ok(engine.registers(pid)).gpr.rdi == 1);
  CHECK(libcKnownFirst);
  auto plugin = sink.object("/libengine_target_plugin.so");
  REQUIRE(plugin.has_value());
  CHECK(plugin->path == PLUGIN_PATH);
  CHECK(plugin->loadBias != 0);
  CHECK(plugin->dynamicAddress > plugin->loadBias);
  int value = 0;
  ok(engine.memory().read(plugin->loadBias + ok(elfSymbol(PLUGIN_PATH, "plugin_value")), &value, sizeof value));
  CHECK(value == 41);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);
  CHECK(removed == std::vector<std::string>{PLUGIN_PATH});
  CHECK(out.readAll() == "plugin=42\n");
}

TEST_CASE("a sink can keep the process stopped at a library load") {
  RecordingSink sink;
  Engine engine(sink);
  sink.onLibrariesHook = [&](const LibraryEvent& ev) {
    for (auto& o : ev.added)
      if (o.path == PLUGIN_PATH) REQUIRE(engine.pause().get().ok());
  };
  ok(engine.launch({.program = DLOPEN_PATH, .args = {PLUGIN_PATH}}));
  sink.stop();
  ok(engine.resume());
  EngineStop stop = sink.stop();
  CHECK(stop.reason == EngineStopReason::Pause);
  auto objects = ok(engine.loadedObjects());
  CHECK(objects.back().path == PLUGIN_PATH);
  ok(engine.resume());
  CHECK(sink.exit().exitCode == 0);
}
