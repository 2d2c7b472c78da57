// ModuleMap: which loaded ELF object holds a runtime address, and the load bias to undo.
#include "strata/native/symbols/module_map.hpp"
#include "strata/native/symbols/loaded_objects.hpp"

#include <gelf.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "internal.hpp"
#include "strata/proc_maps.hpp"

namespace strata::native::symbols {

std::string Module::name() const {
  auto slash = object.path.rfind('/');
  return slash == std::string::npos ? object.path : object.path.substr(slash + 1);
}

Result<const Module*> ModuleMap::add(const LoadedObject& object) {
  auto symbols = cache_.get(object.path);
  if (!symbols) return symbols.takeError();
  Module m;
  m.object = object;
  m.symbols = *symbols;
  Elf* elf = m.symbols->elf();
  std::size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0)
    return Error{errors::kObjectUnreadable, "elf_getphdrnum " + object.path + ": " + elf_errmsg(-1), true};
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    lo = std::min<std::uint64_t>(lo, ph.p_vaddr);
    hi = std::max<std::uint64_t>(hi, ph.p_vaddr + ph.p_memsz);
  }
  if (lo >= hi) return Error{errors::kObjectUnreadable, object.path + " has no loadable segments", true};
  m.low = lo + object.loadBias;
  m.high = hi + object.loadBias;
  remove(object.path);
  auto pos = std::upper_bound(modules_.begin(), modules_.end(), m.low,
                              [](std::uint64_t a, const Module& x) { return a < x.low; });
  pos = modules_.insert(pos, std::move(m));
  return &*pos;
}

void ModuleMap::remove(const std::string& path) {
  std::erase_if(modules_, [&](const Module& m) { return m.object.path == path; });
}

const Module* ModuleMap::moduleFor(std::uint64_t address) const {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), address,
                             [](std::uint64_t a, const Module& x) { return a < x.low; });
  if (it == modules_.begin()) return nullptr;
  --it;
  return address < it->high ? &*it : nullptr;
}

std::string ModuleMap::describe(std::uint64_t address) const {
  const Module* m = moduleFor(address);
  if (m == nullptr) return detail::hexAddress(address);
  std::uint64_t fileAddress = address - m->object.loadBias;
  if (auto sym = m->symbols->elfSymbolAt(fileAddress);
      sym && (sym->size == 0 || fileAddress < sym->address + sym->size)) {
    return m->name() + "!" + demangle(sym->name) + "+" + detail::hexAddress(fileAddress - sym->address);
  }
  return m->name() + "+" + detail::hexAddress(fileAddress);
}

std::vector<LoadedObject> loadedObjectsFromMappings(const std::vector<Mapping>& maps,
                                                    const std::function<std::string(const std::string&)>& open) {
  std::vector<LoadedObject> out;
  for (const auto& [file, headerStart] : mappedFiles(maps)) {
    std::string local = open ? open(file) : file;
    auto symbols = ObjectSymbols::open(local);
    if (!symbols) continue;  // a data file mapped by the program, or not an ELF
    Elf* elf = (*symbols)->elf();
    GElf_Ehdr eh;
    if (gelf_getehdr(elf, &eh) == nullptr) continue;
    std::size_t phnum = 0;
    if (elf_getphdrnum(elf, &phnum) != 0) continue;
    std::uint64_t firstVaddr = UINT64_MAX;
    for (std::size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
        firstVaddr = std::min<std::uint64_t>(firstVaddr, ph.p_vaddr & ~0xfffULL);
    }
    if (firstVaddr == UINT64_MAX) continue;
    LoadedObject o;
    o.path = local;
    o.loadBias = eh.e_type == ET_EXEC ? 0 : headerStart - firstVaddr;
    out.push_back(std::move(o));
  }
  return out;
}

Result<std::vector<LoadedObject>> loadedObjectsFromProcMaps(pid_t pid) {
  auto maps = readMappings(pid);
  if (!maps) return errnoError(errors::kSystemCallFailed, "open /proc/" + std::to_string(pid) + "/maps");
  return loadedObjectsFromMappings(*maps);
}

}  // namespace strata::native::symbols
