// An ELF file open for reading through libelf, the one way the engine and the symbol tables
// open one: its descriptor and handle, released together.
#pragma once

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "strata/error_ids.hpp"
#include "strata/result.hpp"

namespace strata {

class ElfFile {
 public:
  // The file at `path`, checked to be an ELF object. ELF_C_READ_MMAP maps it (the symbol
  // tables keep it open); ELF_C_READ reads what is asked.
  static Result<ElfFile> open(const std::string& path, Elf_Cmd cmd = ELF_C_READ_MMAP) {
    if (elf_version(EV_CURRENT) == EV_NONE) return Error{errors::kObjectUnreadable, "libelf: version mismatch", true};
    ElfFile f;
    f.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd_ < 0) return errnoError(errors::kObjectUnreadable, "open " + path);
    f.elf_ = elf_begin(f.fd_, cmd, nullptr);
    if (f.elf_ == nullptr)
      return Error{errors::kObjectUnreadable, "elf_begin " + path + ": " + elf_errmsg(-1), true};
    if (elf_kind(f.elf_) != ELF_K_ELF) return Error{errors::kObjectUnreadable, path + " is not an ELF file", true};
    return f;
  }

  ElfFile() = default;
  ElfFile(ElfFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), elf_(std::exchange(o.elf_, nullptr)) {}
  ElfFile& operator=(ElfFile&& o) noexcept {
    if (this != &o) {
      close();
      fd_ = std::exchange(o.fd_, -1);
      elf_ = std::exchange(o.elf_, nullptr);
    }
    return *this;
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile() { close(); }

  Elf* elf() const { return elf_; }
  int fd() const { return fd_; }

 private:
  void close() {
    if (elf_ != nullptr) elf_end(elf_);
    if (fd_ >= 0) ::close(fd_);
    elf_ = nullptr;
    fd_ = -1;
  }

  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// Each named symbol of the file's .symtab and .dynsym: fn(name, symbol).
template <class Fn>
void forEachSymbol(Elf* elf, Fn fn) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize == 0)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr) continue;
    for (std::size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      const char* name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name != nullptr && *name != '\0') fn(name, sym);
    }
  }
}

}  // namespace strata
