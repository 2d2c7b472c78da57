// ObjectSymbols: opening an ELF file, its ELF symbol tables, CU headers and the per-file cache.
#include "strata/native/symbols/object_symbols.hpp"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"

namespace strata::native::symbols {

namespace {

Error elfError(const std::string& operation, const std::string& path) {
  return Error{errors::kObjectUnreadable, operation + " " + path + ": " + elf_errmsg(-1), true};
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

// Last "::" component of a qualified name, template arguments included.
std::string lastComponent(std::string_view qualified) {
  int depth = 0;
  for (std::size_t i = qualified.size(); i-- > 0;) {
    char c = qualified[i];
    if (c == '>' || c == ')') ++depth;
    else if (c == '<' || c == '(') --depth;
    else if (c == ':' && depth == 0 && i > 0 && qualified[i - 1] == ':')
      return std::string(qualified.substr(i + 1));
  }
  return std::string(qualified);
}

std::string withoutTemplateArgs(std::string_view name) {
  if (name.empty() || name.back() != '>') return std::string(name);
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == '>') ++depth;
    else if (name[i] == '<' && --depth == 0) return std::string(name.substr(0, i));
  }
  return std::string(name);
}

std::string withoutSpaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

}  // namespace

std::string stripParameters(std::string_view demangled) {
  // "ns::f(int) const" → "ns::f"; the parameter list is the last balanced (...) group.
  std::size_t end = demangled.size();
  while (end > 0 && demangled[end - 1] != ')') --end;
  if (end == 0) return std::string(demangled);
  int depth = 0;
  for (std::size_t i = end; i-- > 0;) {
    if (demangled[i] == ')') ++depth;
    else if (demangled[i] == '(' && --depth == 0) {
      std::string_view head = demangled.substr(0, i);
      if (head.ends_with("operator")) return std::string(demangled.substr(0, end));
      // Function template names carry their return type: "int add<int>(int, int)".
      int d = 0;
      std::size_t space = std::string_view::npos;
      for (std::size_t k = 0; k < head.size(); ++k) {
        char c = head[k];
        if (c == '<' || c == '(') ++d;
        else if (c == '>' || c == ')') --d;
        else if (c == ' ' && d == 0 && !head.substr(0, k).ends_with("operator")) space = k;
      }
      if (space != std::string_view::npos) head = head.substr(space + 1);
      return std::string(head);
    }
  }
  return std::string(demangled);
}

bool nameMatches(std::string_view query, std::string_view qualified) {
  if (query.find('(') != std::string_view::npos) return withoutSpaces(query) == withoutSpaces(qualified);
  std::string stripped = stripParameters(qualified);
  auto suffixMatch = [&](const std::string& candidate) {
    if (candidate == query) return true;
    return candidate.size() > query.size() + 2 && candidate.ends_with(query) &&
           candidate.compare(candidate.size() - query.size() - 2, 2, "::") == 0;
  };
  return suffixMatch(stripped) || suffixMatch(withoutTemplateArgs(stripped));
}

Result<std::shared_ptr<ObjectSymbols>> ObjectSymbols::open(const std::string& path) {
  auto file = ElfFile::open(path);
  if (!file) return file.takeError();
  std::shared_ptr<ObjectSymbols> self(new ObjectSymbols());
  self->path_ = path;
  self->file_ = std::move(*file);
  self->elf_ = self->file_.elf();

  const void* id = nullptr;
  ssize_t idLen = dwelf_elf_gnu_build_id(self->elf_, &id);
  if (idLen > 0) self->buildId_ = hex(static_cast<const unsigned char*>(id), idLen);

  // DWARF in the file itself, else in /usr/lib/debug/.build-id/xx/yyyy.debug; only the
  // section headers are looked at here, libdw opens it on first use.
  auto hasDebugInfoSection = [&self](Elf* elf) {
    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return false;
    Elf_Scn* scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type == SHT_NOBITS) continue;
      const char* n = elf_strptr(elf, shstrndx, shdr.sh_name);
      if (n != nullptr && (std::strcmp(n, ".debug_info") == 0 || std::strcmp(n, ".zdebug_info") == 0)) {
        self->debugCompressed_ = (shdr.sh_flags & SHF_COMPRESSED) != 0 || n[1] == 'z';
        return true;
      }
    }
    return false;
  };
  if (hasDebugInfoSection(self->elf_)) {
    self->dwarfElf_ = self->elf_;
  } else if (self->buildId_.size() > 2) {
    std::string debugPath = "/usr/lib/debug/.build-id/" + self->buildId_.substr(0, 2) + "/" +
                            self->buildId_.substr(2) + ".debug";
    if (auto debug = ElfFile::open(debugPath)) {
      self->debugFile_ = std::move(*debug);
      self->debugElf_ = self->debugFile_.elf();
      if (hasDebugInfoSection(self->debugElf_)) self->dwarfElf_ = self->debugElf_;
    }
  }
  self->debugInfo_ = self->dwarfElf_ != nullptr;
  return self;
}

Dwarf* ObjectSymbols::dwarf() const {
  if (!dwarfOpened_) {
    dwarfOpened_ = true;
    if (dwarfElf_ != nullptr) dwarf_ = dwarf_begin_elf(dwarfElf_, DWARF_C_READ, nullptr);
  }
  return dwarf_;
}

std::optional<bool> ObjectSymbols::debugSectionHolds(const char* section, std::string_view bytes) {
  if (dwarfElf_ == nullptr) return false;
  auto known = debugSections_.find(section);
  if (known == debugSections_.end()) {
    std::string_view data;
    std::size_t shstrndx = 0;
    Elf_Scn* scn = nullptr;
    if (elf_getshdrstrndx(dwarfElf_, &shstrndx) == 0) {
      while ((scn = elf_nextscn(dwarfElf_, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) continue;
        const char* n = elf_strptr(dwarfElf_, shstrndx, shdr.sh_name);
        if (n == nullptr || std::strcmp(n, section) != 0) continue;
        // Decompressed in place, once; libdw later finds it so and uses it as it is.
        if ((shdr.sh_flags & SHF_COMPRESSED) != 0 && elf_compress(scn, 0, 0) < 0) break;
        if (Elf_Data* d = elf_getdata(scn, nullptr); d != nullptr && d->d_buf != nullptr)
          data = std::string_view(static_cast<const char*>(d->d_buf), d->d_size);
        break;
      }
    }
    if (scn == nullptr || data.empty()) return std::nullopt;  // no such section: nothing to rule out
    known = debugSections_.emplace(section, data).first;
  }
  return memmem(known->second.data(), known->second.size(), bytes.data(), bytes.size()) != nullptr;
}

Dwarf_CFI* ObjectSymbols::cfi() {
  if (!cfiLoaded_) {
    cfiLoaded_ = true;
    cfi_ = dwarf_getcfi_elf(elf_);
  }
  if (cfi_ == nullptr && dwarf() != nullptr) return dwarf_getcfi(dwarf_);  // owned by dwarf_
  return cfi_;
}

ObjectSymbols::~ObjectSymbols() {
  if (cfi_ != nullptr) dwarf_cfi_end(cfi_);
  if (dwarf_ != nullptr) {
    forgetTypeNames(dwarf_);
    dwarf_end(dwarf_);
  }
  // The ELF files close after this, as members.
}

void ObjectSymbols::loadElfSymbols() {
  if (elfSymbolsLoaded_) return;
  elfSymbolsLoaded_ = true;
  auto scan = [&](Elf* elf) {
    Elf_Scn* scn = nullptr;
    std::size_t total = 0;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) != nullptr && (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) &&
          shdr.sh_entsize != 0)
        total += shdr.sh_size / shdr.sh_entsize;
    }
    elfSymbols_.reserve(elfSymbols_.size() + total);
    scn = nullptr;
    while ((scn = elf_nextscn(elf, scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      if (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data == nullptr || shdr.sh_entsize == 0) continue;
      std::size_t count = shdr.sh_size / shdr.sh_entsize;
      for (std::size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
        int type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
          continue;
        const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
        if (name == nullptr || *name == '\0') continue;
        elfSymbols_.push_back(SymbolEntry{sym.st_value, sym.st_size, name, type == STT_GNU_IFUNC});
      }
    }
  };
  scan(elf_);
  if (debugElf_ != nullptr) scan(debugElf_);
  // Names point into the string tables of the mapped file: no copy per symbol.
  std::sort(elfSymbols_.begin(), elfSymbols_.end(), [](const SymbolEntry& a, const SymbolEntry& b) {
    return a.address != b.address ? a.address < b.address : std::strcmp(a.name, b.name) < 0;
  });
  elfSymbols_.erase(std::unique(elfSymbols_.begin(), elfSymbols_.end(),
                                [](const SymbolEntry& a, const SymbolEntry& b) {
                                  return a.address == b.address && std::strcmp(a.name, b.name) == 0;
                                }),
                    elfSymbols_.end());
}

void ObjectSymbols::loadElfNames() {
  // Apart from the address index: a stack needs addresses only, a function breakpoint names.
  loadElfSymbols();
  if (elfNamesLoaded_) return;
  elfNamesLoaded_ = true;
  elfByName_.reserve(elfSymbols_.size() + elfSymbols_.size() / 4);
  for (std::size_t i = 0; i < elfSymbols_.size(); ++i) {
    std::string_view plain(elfSymbols_[i].name);
    if (auto at = plain.find('@'); at != std::string_view::npos) plain = plain.substr(0, at);  // versioned
    if (plain.size() < 2 || plain[0] != '_' || plain[1] != 'Z') {
      elfByName_.emplace(plain, i);  // C names need no demangling
      continue;
    }
    std::string last = lastComponent(stripParameters(demangle(std::string(plain))));
    std::string bare = withoutTemplateArgs(last);
    if (bare != last) elfByName_.emplace(nameKeys_.emplace_back(std::move(bare)), i);
    elfByName_.emplace(nameKeys_.emplace_back(std::move(last)), i);
  }
}

std::optional<ElfSymbol> ObjectSymbols::elfSymbolAt(std::uint64_t address) {
  loadElfSymbols();
  auto it = std::upper_bound(elfSymbols_.begin(), elfSymbols_.end(), address,
                             [](std::uint64_t a, const SymbolEntry& s) { return a < s.address; });
  if (it == elfSymbols_.begin()) return std::nullopt;
  --it;
  // Prefer a sized symbol that covers the address among aliases at the same address.
  if (it->size != 0 && address >= it->address + it->size) {
    // A sized symbol that ends before the address: the address lies in unnamed code, but
    // "nearest symbol + offset" is still the most useful description.
  }
  return ElfSymbol{it->address, it->size, it->name, it->ifunc};
}

std::optional<ElfSymbol> ObjectSymbols::elfSymbolNamed(std::string_view name) {
  loadElfNames();
  std::string key = lastComponent(stripParameters(name));
  auto range = elfByName_.equal_range(key);
  for (auto it = range.first; it != range.second; ++it) {
    const SymbolEntry& sym = elfSymbols_[it->second];
    if (name == sym.name || nameMatches(name, demangle(sym.name)))
      return ElfSymbol{sym.address, sym.size, sym.name, sym.ifunc};
  }
  return std::nullopt;
}

std::optional<PltStub> ObjectSymbols::pltStubAt(std::uint64_t address) {
  if (!pltLoaded_) {
    pltLoaded_ = true;
    std::size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf_, &shstrndx) == 0) {
      Elf_Scn* scn = nullptr;
      while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
        GElf_Shdr shdr;
        if (gelf_getshdr(scn, &shdr) == nullptr) continue;
        const char* name = elf_strptr(elf_, shstrndx, shdr.sh_name);
        if (name == nullptr) continue;
        std::string_view n(name);
        if (n == ".plt" || n == ".plt.sec" || n == ".plt.got") {
          pltRanges_.emplace_back(shdr.sh_addr, shdr.sh_addr + shdr.sh_size);
          continue;
        }
        if (shdr.sh_type != SHT_RELA || shdr.sh_entsize == 0) continue;
        // Jump slots (.rela.plt) and GLOB_DAT slots (.rela.dyn, used by .plt.got) name symbols.
        Elf_Data* data = elf_getdata(scn, nullptr);
        Elf_Scn* symScn = elf_getscn(elf_, shdr.sh_link);
        GElf_Shdr symShdr;
        if (data == nullptr || symScn == nullptr || gelf_getshdr(symScn, &symShdr) == nullptr) continue;
        Elf_Data* symData = elf_getdata(symScn, nullptr);
        if (symData == nullptr) continue;
        for (std::size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
          GElf_Rela rela;
          if (gelf_getrela(data, static_cast<int>(i), &rela) == nullptr) continue;
          auto type = GELF_R_TYPE(rela.r_info);
          if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
          GElf_Sym sym;
          if (gelf_getsym(symData, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym) == nullptr) continue;
          if (const char* s = elf_strptr(elf_, symShdr.sh_link, sym.st_name); s != nullptr && *s != '\0')
            pltSlotSymbols_.emplace(rela.r_offset, s);
        }
      }
    }
  }
  bool inPlt = false;
  for (auto [low, high] : pltRanges_) inPlt |= address >= low && address < high;
  if (!inPlt) return std::nullopt;
  auto bytes = readFileBytes(address, 16);
  if (!bytes || bytes->size() < 16) return std::nullopt;
  const std::uint8_t* b = bytes->data();
  std::size_t at = 0;
  if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa) at = 4;  // endbr64
  if (b[at] == 0xf2) ++at;                                                // bnd
  if (b[at] != 0xff || b[at + 1] != 0x25) return std::nullopt;             // jmp *disp32(%rip)
  std::int32_t disp = 0;
  std::memcpy(&disp, b + at + 2, sizeof disp);
  PltStub stub;
  stub.gotSlot = address + at + 6 + static_cast<std::int64_t>(disp);
  if (auto it = pltSlotSymbols_.find(stub.gotSlot); it != pltSlotSymbols_.end()) stub.symbol = it->second;
  return stub;
}

void ObjectSymbols::loadCuHeaders() {
  if (cuHeadersLoaded_ || dwarf() == nullptr) return;
  cuHeadersLoaded_ = true;
  Dwarf_Off offset = 0, next = 0;
  std::size_t headerSize = 0;
  // Only each CU's header and its first DIE are read: the cheap scan the lazy index needs.
  while (dwarf_nextcu(dwarf_, offset, &next, &headerSize, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf_, offset + headerSize, &cu) != nullptr) {
      CuHeader h;
      h.offset = offset + headerSize;
      if (const char* n = dwarf_diename(&cu)) h.name = n;
      Dwarf_Attribute attr;
      const char* compDir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
      if (compDir) h.compDir = compDir;
      // A relative build directory still joins here: a header's name only needs to end right.
      if (!h.name.empty() && h.name[0] != '/' && !h.compDir.empty() && h.compDir[0] != '/')
        h.name = h.compDir + "/" + h.name;
      else
        h.name = detail::sourcePath(h.name, compDir);
      cus_.push_back(std::move(h));
    }
    offset = next;
  }
}

std::size_t ObjectSymbols::cuCount() {
  loadCuHeaders();
  return cus_.size();
}

std::vector<Dwarf_Off> ObjectSymbols::cuOffsets() {
  loadCuHeaders();
  std::vector<Dwarf_Off> out;
  out.reserve(cus_.size());
  for (const auto& h : cus_) out.push_back(h.offset);
  return out;
}

bool ObjectSymbols::cuForAddress(std::uint64_t address, Dwarf_Die* cu) {
  if (!debugInfo_ || dwarf() == nullptr) return false;
  if (dwarf_addrdie(dwarf_, address, cu) != nullptr) return true;
  // No or incomplete .debug_aranges: ask each CU's own ranges (one DIE per CU).
  loadCuHeaders();
  for (const CuHeader& h : cus_) {
    if (dwarf_offdie(dwarf_, h.offset, cu) != nullptr && dwarf_haspc(cu, address) > 0) return true;
  }
  return false;
}

Result<std::vector<std::uint8_t>> ObjectSymbols::readFileBytes(std::uint64_t address, std::size_t size) {
  std::size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) != 0) return elfError("elf_getphdrnum", path_);
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    if (address < ph.p_vaddr || address >= ph.p_vaddr + ph.p_filesz) continue;
    std::size_t n = std::min<std::uint64_t>(size, ph.p_vaddr + ph.p_filesz - address);
    std::vector<std::uint8_t> bytes(n);
    ssize_t got = pread(file_.fd(), bytes.data(), n, static_cast<off_t>(ph.p_offset + address - ph.p_vaddr));
    if (got < 0) return errnoError(errors::kObjectUnreadable, "pread " + path_);
    bytes.resize(static_cast<std::size_t>(got));
    return bytes;
  }
  return Error{errors::kObjectUnreadable, "address " + detail::hexAddress(address) + " is not in a loaded segment of " + path_, true};
}

Result<std::shared_ptr<ObjectSymbols>> SymbolCache::get(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errnoError(errors::kObjectUnreadable, "stat " + path);
  // Identity by inode and mtime: a rebuilt file gets a fresh index, a symlinked one shares it.
  std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                    std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  if (auto it = byKey_.find(key); it != byKey_.end()) return it->second;
  auto opened = ObjectSymbols::open(path);
  if (!opened) return opened.takeError();
  byKey_[key] = *opened;
  return *opened;
}

}  // namespace strata::native::symbols
