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
  void onStopped(const EngineStop& e) override {
    if (e.reason == EngineStopReason::Entry) entry.set_value();
  }
  void onExited(const ExitEvent& e) override { exited.set_value(e); }
  void onLibraries(const LibraryEvent& e) override {
    for (auto& o : e.added)
      if (o.path.find("engine_target_hot") != std::string::npos) bias = o.loadBias;
  }
};

// One run: `hits` calls of tick() with a never-true condition on tick + offset.
double measure(const std::string& target, std::uint64_t tick, std::uint64_t offset, long hits, long& seen) {
  Sink sink;
  Engine engine(sink);
  auto pid = engine.launch({.program = target, .args = {std::to_string(hits)}}).get();
  if (!pid) {
    std::fprintf(stderr, "%s\n", pid.error().message.c_str());
    return -1;
  }
  sink.entry.get_future().get();
  seen = 0;
  auto bp = engine.addBreakpoint(sink.bias + tick + offset, [&](const HitContext&) {
    ++seen;
    return false;
  }).get();
  if (!bp) {
    std::fprintf(stderr, "%s\n", bp.error().message.c_str());
    return -1;
  }
  auto start = std::chrono::steady_clock::now();
  if (auto r = engine.resume().get(); !r) {
    std::fprintf(stderr, "%s\n", r.error().message.c_str());
    return -1;
  }
  sink.exited.get_future().get();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string target = argc > 1 ? argv[1] : STRATA_HOT_TARGET;
  long hits = argc > 2 ? std::atol(argv[2]) : 100000;
  auto tick = strata::native::engine::testing::elfSymbol(target, "tick");
  if (!tick) {
    std::fprintf(stderr, "%s\n", tick.error().message.c_str());
    return 1;
  }
  // At tick's first instruction (push %rbp, emulated) and at tick+4 (stepped over by
  // PTRACE_SINGLESTEP): the two ways a hit is resumed.
  struct Case {
    const char* name;
    std::uint64_t offset;
  } cases[] = {{"function entry (emulated step-over)", 0}, {"mid-function (single-step step-over)", 4}};
  int status = 0;
  for (auto& c : cases) {
    long seen = 0;
    double seconds = measure(target, *tick, c.offset, hits, seen);
    if (seconds < 0) return 1;
    std::printf("%-38s %ld hits in %.3f s: %.0f hits/s\n", c.name, seen, seconds, seen / seconds);
    if (seen != hits) status = 1;
  }
  return status;
}
