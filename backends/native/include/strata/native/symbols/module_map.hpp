// The objects mapped into one process: runtime address ↔ (ObjectSymbols, link-time address).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/native/symbols/object_symbols.hpp"
#include "strata/native/target_access.hpp"

namespace strata::native::symbols {

struct Module {
  LoadedObject object;
  std::shared_ptr<ObjectSymbols> symbols;
  std::uint64_t low = 0;   // runtime range of its PT_LOAD segments
  std::uint64_t high = 0;
  std::string name() const;  // file name without directories
};

class ModuleMap {
 public:
  explicit ModuleMap(SymbolCache& cache) : cache_(cache) {}
  // Called by the engine on each library load (r_debug) and for the executable.
  Result<const Module*> add(const LoadedObject& object);
  void remove(const std::string& path);
  const Module* moduleFor(std::uint64_t runtimeAddress) const;
  const std::vector<Module>& modules() const { return modules_; }

  // "libc.so.6+0x2a1b3" or "main+0x12" — the name of an address without debug info.
  std::string describe(std::uint64_t runtimeAddress) const;

 private:
  SymbolCache& cache_;
  std::vector<Module> modules_;  // sorted by low
};

// The ELF objects of a process as /proc/PID/maps shows them (for attach and for tests;
// the engine follows r_debug instead once the dynamic linker is up).
Result<std::vector<LoadedObject>> loadedObjectsFromProcMaps(pid_t pid);

}  // namespace strata::native::symbols
