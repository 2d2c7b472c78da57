// Benchmark: breakpoint hits per second on a hot loop, each hit resumed inside the engine.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "elf_symtab.hpp"
#include "strata/native/engine/engine.hpp"

using namespace strata::native::engine;

namespace {

class Sink : public EventSink {
 public:
  std::promise<ExitEvent> exited;
  std::promise<void> entry;
  std::uint64_t bias = 0;
  void onStopped(const StopEvent& e) override {
    if (e.reason == StopReason::Entry) entry.set_value();
  }
  void onExited(const ExitEvent& e) override { exited.set_value(e); }
  void onLibraries(const LibraryEvent& e) override {
    for (auto& o : e.added)
      if (o.path.find("engine_target_hot") != std::string::npos) bias = o.loadBias;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string target = argc > 1 ? argv[1] : STRATA_HOT_TARGET;
  long hits = argc > 2 ? std::atol(argv[2]) : 100000;
  auto tick = strata::native::engine::testing::elfSymbol(target, "tick");
  if (!tick) {
    std::fprintf(stderr, "%s\n", tick.error().message.c_str());
    return 1;
  }
  Sink sink;
  Engine engine(sink);
  auto pid = engine.launch({.program = target, .args = {std::to_string(hits)}}).get();
  if (!pid) {
    std::fprintf(stderr, "%s\n", pid.error().message.c_str());
    return 1;
  }
  sink.entry.get_future().get();
  long seen = 0;
  auto bp = engine.addBreakpoint(sink.bias + *tick, [&](const HitContext&) {
    ++seen;
    return false;
  }).get();
  if (!bp) {
    std::fprintf(stderr, "%s\n", bp.error().message.c_str());
    return 1;
  }
  auto start = std::chrono::steady_clock::now();
  if (auto r = engine.resume().get(); !r) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return 1;
  }
  ExitEvent exit = sink.exited.get_future().get();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("breakpoint hits: %ld in %.3f s, %.0f hits/s (%s)\n", seen, seconds, seen / seconds,
              exit.description.c_str());
  return seen == hits ? 0 : 1;
}
