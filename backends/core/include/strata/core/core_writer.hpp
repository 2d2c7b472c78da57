// Writing the core file of a running process without ending it (gcore's job, without gdb): every
// thread is stopped for as long as its registers and memory take to copy, then let go.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "strata/result.hpp"

namespace strata::native::engine {
class EngineApi;
struct SignalInfo;
}  // namespace strata::native::engine

namespace strata::core {

struct DumpReport {
  std::string path;
  std::uint64_t bytes = 0;         // the file's size
  std::size_t threads = 0;
  std::size_t segments = 0;        // memory segments written (file pages a reader finds in the files are left out)
  std::uint64_t unreadable = 0;    // bytes of mapped memory that could not be read (written as zeros)
  double heldSeconds = 0;          // how long the process was stopped
};

// What is written: every anonymous and written mapping (heap, stacks, the data of every
// library, where CPython keeps its runtime and objects), the first page of each mapped file (its
// ELF header and build id), and none of the read-only file pages (code, constants), which a
// reader takes from the files the core's notes name, as the kernel's default coredump_filter
// does. A process stopped by a signal stays stopped.
Result<DumpReport> dumpCore(pid_t pid, const std::string& path);

// The same through an engine that holds the process stopped already (a crash stop): nothing is
// attached or let go. `signal`: the fatal signal the stop is for, as a kernel core records it
// (NT_SIGINFO, the thread that took it first).
Result<DumpReport> writeCore(native::engine::EngineApi& engine, pid_t pid, const std::string& path,
                             const native::engine::SignalInfo* signal = nullptr, pid_t signalThread = 0);

}  // namespace strata::core
