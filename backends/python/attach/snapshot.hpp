// One read-only picture of a CPython process: every thread's Python frames (with simple locals)
// spliced among its native frames, read with the process stopped and released at once.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/python/remote/py_remote.hpp"
#include "strata/result.hpp"

namespace strata::python::attach {

struct SnapshotFrame {
  bool python = false;
  std::string function;
  std::string file;  // Python: the source; native: the DWARF file, if any
  int line = 0;
  std::string module;  // native
  std::uint64_t pc = 0;
  std::optional<std::vector<remote::PyLocal>> locals;  // Python frames
};

struct SnapshotThread {
  pid_t tid = 0;
  std::string name;
  bool python = false;
  bool holdsGil = false;
  std::string state;  // "holds the GIL; in syscall clock_nanosleep", "waiting for the GIL", ...
  std::string topNative;  // the innermost native function, for messages
  std::vector<SnapshotFrame> frames;  // innermost first; interpreter internals left out
};

struct ProcessSnapshot {
  pid_t pid = 0;
  std::string version;  // "3.12.1"
  int minor = 0;
  bool stoppedBySignal = false;  // in a group stop (SIGSTOP, ^Z): read and left so
  bool gilLocked = false;
  pid_t gilHolder = 0;           // the thread holding the GIL, 0 when free or not known
  std::vector<SnapshotThread> threads;
  std::vector<std::uint64_t> threadStates;
  std::optional<std::int64_t> rank;  // RANK, OMPI_COMM_WORLD_RANK, ... in its environment now
};

// Where launchers put a process's rank: torchrun, Open MPI, MPICH/PMI, Slurm.
inline constexpr const char* kRankVariables[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};

// A rank variable (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID) in the environment the
// stopped process has now: libc's `environ` array at `environVar`, read from its memory
// (bounded). Empty: none, or unreadable.
std::string environRank(pid_t pid, std::uint64_t environVar);

// Fails with NativeDebugger's explanation when the process cannot be traced (no such pid,
// another tracer, ptrace_scope, another user), or kNoPythonRuntime when it runs no CPython.
Result<ProcessSnapshot> takeSnapshot(remote::PyRemote& remote);

// Whether `pid` runs CPython (a mapped libpython or python executable defines _PyRuntime).
bool runsPython(pid_t pid);

char processState(pid_t pid);

}  // namespace strata::python::attach
