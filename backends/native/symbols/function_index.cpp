// Functions: by name (symbol tables first, DWARF on demand) and by address (DWARF, then symbols).
#include <gelf.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <set>

#include "internal.hpp"
#include "strata/native/symbols/object_symbols.hpp"

namespace strata::native::symbols {

namespace {

std::string linkageName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  const char* s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
  if (s == nullptr) s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
  return s != nullptr ? s : "";
}

// Ranges of a DIE with code; empty for declarations and abstract instances.
std::vector<std::pair<std::uint64_t, std::uint64_t>> pcRanges(Dwarf_Die* die) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  Dwarf_Addr base = 0, start = 0, end = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0) {
    if (end > start) out.emplace_back(start, end);
  }
  return out;
}

const char* lastComponentKey(const std::string& qualified, std::string& storage) {
  std::size_t pos = std::string::npos;
  int depth = 0;
  for (std::size_t i = qualified.size(); i-- > 0;) {
    char c = qualified[i];
    if (c == '>') ++depth;
    else if (c == '<') --depth;
    else if (c == ':' && depth == 0 && i > 0 && qualified[i - 1] == ':') {
      pos = i + 1;
      break;
    }
  }
  storage = pos == std::string::npos ? qualified : qualified.substr(pos);
  return storage.c_str();
}

}  // namespace

std::string qualifiedFunctionName(Dwarf_Die* die) {
  std::string linkage = linkageName(die);
  if (!linkage.empty()) return stripParameters(demangle(linkage));
  const char* n = detail::integratedName(die);
  return n != nullptr ? n : "??";
}

FunctionInfo ObjectSymbols::describeSubprogram(Dwarf_Die* die) {
  FunctionInfo f;
  f.hasDebugInfo = true;
  f.dieOffset = dwarf_dieoffset(die);
  std::string linkage = linkageName(die);
  if (!linkage.empty()) {
    f.displayName = demangle(linkage);
    f.name = stripParameters(f.displayName);
  } else if (const char* n = detail::integratedName(die)) {
    f.name = f.displayName = n;
  }
  auto ranges = pcRanges(die);
  if (!ranges.empty()) {
    f.low = ranges.front().first;
    f.high = ranges.front().second;
  }
  Dwarf_Addr entry = 0;
  f.entry = dwarf_entrypc(die, &entry) == 0 ? entry : f.low;
  f.inlinedCopy = dwarf_tag(die) == DW_TAG_inlined_subroutine;
  return f;
}

const std::vector<FunctionInfo>& ObjectSymbols::functionsOfCu(Dwarf_Die* cu) {
  Dwarf_Off key = dwarf_dieoffset(cu);
  if (auto it = cuFunctions_.find(key); it != cuFunctions_.end()) return it->second;
  std::vector<FunctionInfo>& out = cuFunctions_[key];
  std::function<void(Dwarf_Die*)> walk = [&](Dwarf_Die* parent) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_subprogram) {
        auto ranges = pcRanges(&child);
        if (ranges.empty()) continue;
        FunctionInfo base = describeSubprogram(&child);
        // A function split into hot and cold parts is one function with several ranges.
        for (auto [lo, hi] : ranges) {
          FunctionInfo f = base;
          f.low = lo;
          f.high = hi;
          out.push_back(std::move(f));
        }
      } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                 tag == DW_TAG_union_type) {
        walk(&child);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  walk(cu);
  std::sort(out.begin(), out.end(), [](const FunctionInfo& a, const FunctionInfo& b) { return a.low < b.low; });
  return out;
}

std::optional<FunctionInfo> ObjectSymbols::subprogramAt(Dwarf_Die* cu, std::uint64_t address) {
  const auto& fns = functionsOfCu(cu);
  auto it = std::upper_bound(fns.begin(), fns.end(), address,
                             [](std::uint64_t a, const FunctionInfo& f) { return a < f.low; });
  while (it != fns.begin()) {
    --it;
    if (address >= it->low && address < it->high) return *it;
    if (it->low + (1u << 20) < address) break;  // nested ranges are rare; stop scanning early
  }
  return std::nullopt;
}

std::optional<FunctionInfo> ObjectSymbols::functionAt(std::uint64_t address) {
  Dwarf_Die cu;
  if (cuForAddress(address, &cu)) {
    if (auto f = subprogramAt(&cu, address)) return f;
  }
  return elfFunctionAt(address);
}

std::optional<FunctionInfo> ObjectSymbols::elfFunctionAt(std::uint64_t address) {
  auto sym = elfSymbolAt(address);
  if (!sym) return std::nullopt;
  if (sym->size != 0 && address >= sym->address + sym->size) return std::nullopt;
  FunctionInfo f;
  f.displayName = demangle(sym->name);
  f.name = stripParameters(f.displayName);
  f.entry = f.low = sym->address;
  f.high = sym->address + sym->size;
  return f;
}

std::vector<Dwarf_Die> ObjectSymbols::scopesAt(std::uint64_t address) {
  if (auto it = scopesCache_.find(address); it != scopesCache_.end()) return it->second;
  if (scopesCache_.size() > 4096) scopesCache_.clear();
  std::vector<Dwarf_Die>& chain = scopesCache_[address];
  Dwarf_Die cu;
  if (!cuForAddress(address, &cu)) return chain;
  auto fn = subprogramAt(&cu, address);
  Dwarf_Die die;
  if (!fn || dwarf_offdie(dwarf(), fn->dieOffset, &die) == nullptr) return chain;
  chain.push_back(die);
  // Descend through the nested scopes that hold the address; a block without addresses of
  // its own is looked through, not entered.
  std::function<bool(Dwarf_Die*)> descend = [&](Dwarf_Die* parent) -> bool {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return false;
    do {
      int tag = dwarf_tag(&child);
      if (tag != DW_TAG_lexical_block && tag != DW_TAG_inlined_subroutine) continue;
      int has = dwarf_haspc(&child, address);
      if (has > 0) {
        chain.push_back(child);
        descend(&chain.back());
        return true;
      }
      if (!dwarf_hasattr(&child, DW_AT_low_pc) && !dwarf_hasattr(&child, DW_AT_ranges) && descend(&child))
        return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
  };
  Dwarf_Die top = die;
  descend(&top);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

void ObjectSymbols::addInlinedCopies(Dwarf_Die* cu, Dwarf_Off origin, std::vector<FunctionInfo>& out) {
  std::function<void(Dwarf_Die*)> walk = [&](Dwarf_Die* parent) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_inlined_subroutine) {
        Dwarf_Attribute attr;
        Dwarf_Die target;
        if (dwarf_attr(&child, DW_AT_abstract_origin, &attr) != nullptr &&
            dwarf_formref_die(&attr, &target) != nullptr) {
          // The abstract instance may itself point at the in-class declaration.
          Dwarf_Die spec;
          bool match = dwarf_dieoffset(&target) == origin;
          if (!match && dwarf_attr(&target, DW_AT_specification, &attr) != nullptr &&
              dwarf_formref_die(&attr, &spec) != nullptr)
            match = dwarf_dieoffset(&spec) == origin;
          if (match) {
            FunctionInfo f = describeSubprogram(&child);
            if (f.low != f.high || f.entry != 0) out.push_back(std::move(f));
          }
        }
        walk(&child);
      } else if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block || tag == DW_TAG_namespace ||
                 tag == DW_TAG_class_type || tag == DW_TAG_structure_type) {
        walk(&child);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  walk(cu);
}

std::optional<Dwarf_Off> ObjectSymbols::globalVariableNamed(std::string_view name) {
  if (!globalsLoaded_ && dwarf() != nullptr) {
    globalsLoaded_ = true;
    loadCuHeaders();
    std::function<void(Dwarf_Die*, const std::string&)> walk = [&](Dwarf_Die* parent, const std::string& prefix) {
      Dwarf_Die child;
      if (dwarf_child(parent, &child) != 0) return;
      do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_variable && dwarf_hasattr(&child, DW_AT_location)) {
          if (const char* n = detail::integratedName(&child)) globalVariables_.emplace(prefix + n, dwarf_dieoffset(&child));
        } else if (tag == DW_TAG_namespace) {
          const char* n = dwarf_diename(&child);
          walk(&child, prefix + (n != nullptr ? n : "(anonymous namespace)") + "::");
        }
      } while (dwarf_siblingof(&child, &child) == 0);
    };
    for (const CuHeader& h : cus_) {
      Dwarf_Die cu;
      if (dwarf_offdie(dwarf(), h.offset, &cu) != nullptr) walk(&cu, "");
    }
  }
  auto it = globalVariables_.find(std::string(name));
  if (it == globalVariables_.end()) return std::nullopt;
  return it->second;
}

void ObjectSymbols::loadDwarfNameIndex() {
  if (dwarfNamesLoaded_ || dwarf() == nullptr) return;
  dwarfNamesLoaded_ = true;
  loadCuHeaders();
  std::string key;
  std::function<void(Dwarf_Die*)> walk = [&](Dwarf_Die* parent) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
        if (!pcRanges(&child).empty()) {
          FunctionInfo f = describeSubprogram(&child);
          auto& index = tag == DW_TAG_subprogram ? dwarfFunctionsByName_ : inlineInstancesByName_;
          if (!f.name.empty()) index.emplace(lastComponentKey(f.name, key), dwarf_dieoffset(&child));
        }
        walk(&child);
      } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
                 tag == DW_TAG_structure_type) {
        walk(&child);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  for (const CuHeader& h : cus_) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf(), h.offset, &cu) != nullptr) walk(&cu);
  }
}

bool ObjectSymbols::debugStringsMayName(std::string_view name) {
  // Compilers put names longer than a string offset into .debug_str (clang: every name); the
  // linker may merge a name into the tail of a longer string, so only its end is anchored.
  if (!hasDebugInfo()) return false;
  if (name.size() < 8) return true;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return true;
  std::string needle(name);
  needle += '\0';
  return debugSectionMayHold(".debug_str", needle);
}

Result<std::vector<FunctionInfo>> ObjectSymbols::functionsNamed(std::string_view name) {
  std::vector<FunctionInfo> out;
  std::set<std::uint64_t> seen;
  loadElfNames();
  std::string query(name);
  std::string keyStorage;
  std::string lookupKey = lastComponentKey(stripParameters(query), keyStorage);
  std::vector<std::size_t> candidates;
  auto range = elfByName_.equal_range(lookupKey);
  for (auto it = range.first; it != range.second; ++it) candidates.push_back(it->second);
  for (std::size_t index : candidates) {
    const SymbolEntry& sym = elfSymbols_[index];
    std::string_view name(sym.name);
    std::string plain(name.substr(0, name.find('@')));
    std::string demangled = demangle(plain);
    if (plain != query && !nameMatches(query, demangled)) continue;
    if (!seen.insert(sym.address).second) continue;
    Dwarf_Die cu;
    std::optional<FunctionInfo> f;
    if (cuForAddress(sym.address, &cu)) {
      f = subprogramAt(&cu, sym.address);
      if (f && f->low != sym.address) f.reset();
    }
    if (f) {
      f->entry = sym.address;
      Dwarf_Die die;
      Dwarf_Attribute attr;
      Dwarf_Die origin;
      // Inlined copies refer to the abstract instance (or the in-class declaration).
      if (dwarf_offdie(dwarf(), f->dieOffset, &die) != nullptr) {
        Dwarf_Off originOffset = f->dieOffset;
        if (dwarf_attr(&die, DW_AT_abstract_origin, &attr) != nullptr && dwarf_formref_die(&attr, &origin) != nullptr)
          originOffset = dwarf_dieoffset(&origin);
        std::vector<FunctionInfo> copies;
        addInlinedCopies(&cu, originOffset, copies);
        out.push_back(*f);
        for (auto& c : copies)
          if (seen.insert(c.entry).second) out.push_back(std::move(c));
        continue;
      }
      out.push_back(*f);
    } else {
      FunctionInfo s;
      s.displayName = demangled;
      s.name = stripParameters(demangled);
      s.entry = s.low = sym.address;
      s.high = sym.address + sym.size;
      out.push_back(std::move(s));
    }
  }
  if (out.empty() && hasDebugInfo() && (dwarfNamesLoaded_ || debugStringsMayName(lookupKey))) {
    // Not in any symbol table (inline-only or stripped): the full DWARF name index, built once,
    // and only when .debug_str holds the name at all (a pending breakpoint must not index
    // all of libc or libpython at each library load).
    loadDwarfNameIndex();
    for (auto* index : {&dwarfFunctionsByName_, &inlineInstancesByName_}) {
      auto r = index->equal_range(lookupKey);
      for (auto it = r.first; it != r.second; ++it) {
        Dwarf_Die die;
        if (dwarf_offdie(dwarf(), it->second, &die) == nullptr) continue;
        FunctionInfo f = describeSubprogram(&die);
        if (!nameMatches(query, f.displayName) && f.name != query) continue;
        if (seen.insert(f.entry).second) out.push_back(std::move(f));
      }
    }
  }
  if (out.empty()) return Error{errors::kNoSuchFunction, "no function named '" + query + "' in " + path_, true};
  std::sort(out.begin(), out.end(), [](const FunctionInfo& a, const FunctionInfo& b) { return a.entry < b.entry; });
  return out;
}

}  // namespace strata::native::symbols
