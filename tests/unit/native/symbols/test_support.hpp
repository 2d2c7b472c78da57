// Shared helpers for the symbols tests: a target stopped at a marker, with its modules and stack.
#pragma once

#include <doctest.h>

#include <memory>
#include <string>

#include "strata/native/symbols/module_map.hpp"
#include "strata/native/symbols/stack.hpp"
#include "traced_process.hpp"

namespace strata::native::symbols::test {

struct Stopped {
  std::unique_ptr<TracedProcess> process;
  SymbolCache cache;
  std::unique_ptr<ModuleMap> modules;
  std::unique_ptr<RemoteUnwinder> unwinder;
  std::unique_ptr<StackView> stack;

  // Runs `path` to its `traps`-th SIGTRAP and unwinds the stopped thread.
  void run(const std::string& path, int traps = 1) {
    auto started = TracedProcess::start(path);
    REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().message));
    process.reset(*started);
    for (int i = 0; i < traps; ++i) {
      auto cont = process->continueToTrap();
      REQUIRE_MESSAGE(cont.ok(), (cont.ok() ? "" : cont.error().message));
    }
    modules = std::make_unique<ModuleMap>(cache);
    auto objects = loadedObjectsFromProcMaps(process->pid());
    REQUIRE(objects.ok());
    for (const auto& o : *objects) REQUIRE(modules->add(o).ok());
    auto u = RemoteUnwinder::create();
    REQUIRE(u.ok());
    unwinder = std::move(*u);
    unwindNow();
  }
  void unwindNow() {
    auto raw = unwinder->unwind(process->pid());
    REQUIRE_MESSAGE(raw.ok(), (raw.ok() ? "" : raw.error().message));
    stack = std::make_unique<StackView>(std::move(*raw), *modules);
  }
  // Index of the first frame running `function`.
  int frameOf(const std::string& function) {
    auto all = stack->frames(0, 64);
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i].function == function) return static_cast<int>(i);
    return -1;
  }
};

}  // namespace strata::native::symbols::test
