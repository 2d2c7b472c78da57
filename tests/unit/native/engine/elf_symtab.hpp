// Test helper: link-time addresses of symbols from an ELF file's .symtab/.dynsym (libelf).
#pragma once

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "strata/result.hpp"

namespace strata::native::engine::testing {

struct ElfSymbol {
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

inline Result<ElfSymbol> elfSymbolEntry(const std::string& path, const std::string& symbol) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{errors::kObjectUnreadable, "libelf: version mismatch", true};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kObjectUnreadable, "open " + path);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (!elf) {
    close(fd);
    return Error{errors::kObjectUnreadable, "read " + path + ": " + elf_errmsg(-1), true};
  }
  ElfSymbol found;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !found.value; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (std::size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_value == 0) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name && symbol == name) {
        found = ElfSymbol{sym.st_value, sym.st_size};
        break;
      }
    }
  }
  elf_end(elf);
  close(fd);
  if (!found.value) return Error{errors::kUnknownName, path + ": no symbol " + symbol, true};
  return found;
}

inline Result<std::uint64_t> elfSymbol(const std::string& path, const std::string& symbol) {
  auto entry = elfSymbolEntry(path, symbol);
  if (!entry) return entry.takeError();
  return entry->value;
}

// The bytes of the file backing a link-time address (for comparing with memory reads).
inline Result<std::string> elfBytes(const std::string& path, std::uint64_t address, std::size_t size) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{errors::kObjectUnreadable, "libelf: version mismatch", true};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kObjectUnreadable, "open " + path);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  std::string out;
  std::size_t phnum = 0;
  if (elf) elf_getphdrnum(elf, &phnum);
  for (std::size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (address < ph.p_vaddr || address + size > ph.p_vaddr + ph.p_filesz) continue;
    out.resize(size);
    if (pread(fd, out.data(), size, static_cast<off_t>(ph.p_offset + (address - ph.p_vaddr))) != static_cast<ssize_t>(size))
      out.clear();
  }
  if (elf) elf_end(elf);
  close(fd);
  if (out.empty()) return Error{errors::kObjectUnreadable, path + ": address not in a loaded segment", true};
  return out;
}

}  // namespace strata::native::engine::testing
