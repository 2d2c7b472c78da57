// An ELF core file read as a stopped process: its threads' registers, its memory (the dumped
// segments, and the pages a kernel core leaves out read from the files its notes name), its
// mapped files and objects, the signal that ended it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/native/target_access.hpp"
#include "strata/proc_maps.hpp"
#include "strata/result.hpp"

namespace strata::core {

struct CoreThread {
  native::ThreadRegisters registers;  // registers.tid is the thread's id
  int signal = 0;                     // pr_cursig: the signal this thread was handling (0: none)
};

// Why the process ended, from NT_SIGINFO (kernel cores; absent in a core taken of a live process).
struct CoreSignal {
  int signo = 0;
  int code = 0;
  std::uint64_t address = 0;  // si_addr for SIGSEGV, SIGBUS, SIGFPE, SIGILL
  std::string description;    // "SIGSEGV: address not mapped to object at 0x0"
};

// A mapped file whose bytes the session reads from the file now on disk, and how it compares
// with the file the process had mapped.
struct CoreFileCheck {
  std::string path;   // as the process named it
  std::string local;  // what is read (sysroot applied); empty when no such file
  std::string problem;  // "" when it matches; else what is wrong ("missing", "changed since: ...")
};

struct CoreOptions {
  std::string sysroot;  // prefix for every file the core names (a container's root, a copy)
  std::string program;  // the executable, when the core's notes do not name a readable one
};

class CoreFile : public native::MemoryAccess {
 public:
  static Result<std::unique_ptr<CoreFile>> open(const std::string& path, const CoreOptions& options = {});
  ~CoreFile() override;

  // Reads from the dumped segments, then from the mapped files for what a core leaves out
  // (read-only file pages). Fails with kCoreMemoryMissing, naming the address and why.
  Result<void> read(std::uint64_t address, void* buffer, std::size_t size) override;
  Result<void> write(std::uint64_t address, const void* buffer, std::size_t size) override;
  // As much of [address, address+size) as can be read from the start: the bytes read.
  std::size_t readPrefix(std::uint64_t address, void* buffer, std::size_t size);

  const std::string& path() const { return path_; }
  pid_t pid() const { return pid_; }
  const std::string& command() const { return command_; }     // pr_fname: "python3.12"
  const std::string& arguments() const { return arguments_; }  // pr_psargs (the kernel keeps 80 bytes)
  const std::string& executable() const { return executable_; }  // as the process named it
  const std::vector<CoreThread>& threads() const { return threads_; }  // the crashing thread first
  const std::optional<CoreSignal>& signal() const { return signal_; }
  const std::vector<Mapping>& mappings() const { return mappings_; }  // from NT_FILE, path as named
  // The ELF objects mapped, with load biases; paths are those to read (the sysroot applied).
  const std::vector<native::LoadedObject>& objects() const { return objects_; }
  // The path to read for a file the process had mapped.
  std::string localPath(const std::string& mapped) const;
  const std::vector<CoreFileCheck>& fileChecks() const { return fileChecks_; }
  // What is missing or suspect (a truncated core, files gone or changed), one line each.
  const std::vector<std::string>& problems() const { return problems_; }
  std::uint64_t size() const { return size_; }

  struct Segment {
    std::uint64_t vaddr = 0, memsz = 0, filesz = 0, offset = 0;
    std::uint32_t flags = 0;
  };

 private:
  CoreFile() = default;
  Result<void> parse(const CoreOptions& options);
  void parseNote(std::uint32_t type, const unsigned char* desc, std::size_t size);
  void checkFiles();
  void nameFromLinkMap();
  const unsigned char* mappedFileBytes(const std::string& local, std::size_t& size);

  std::string path_;
  std::string sysroot_;
  int fd_ = -1;
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
  pid_t pid_ = 0;
  std::string command_, arguments_, executable_;
  std::string program_;  // CoreOptions::program: read for the executable
  std::uint64_t entry_ = 0;  // AT_ENTRY: which mapping is the executable
  std::vector<CoreThread> threads_;
  std::optional<CoreSignal> signal_;
  std::vector<Segment> segments_;
  std::vector<Mapping> mappings_;
  std::vector<native::LoadedObject> objects_;
  std::vector<CoreFileCheck> fileChecks_;
  std::vector<std::string> problems_;
  struct OpenFile {
    std::string local;
    const unsigned char* data = nullptr;
    std::size_t size = 0;
  };
  std::vector<OpenFile> files_;
};

}  // namespace strata::core
