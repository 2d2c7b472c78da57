// Bringing the agent into a running CPython 3.12/3.13 with no restart: a bootstrap string
// queued as a pending call (PyRun_SimpleString) while every thread of the process is stopped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/python/remote/py_remote.hpp"
#include "strata/result.hpp"

namespace strata::python::attach {

inline constexpr std::uint64_t kAbsent = ~std::uint64_t{0};

// Where one CPython keeps its pending-call queues and eval breakers; generated at build time
// from its internal headers (gen/pending_gen.c), kAbsent where a version has no such field.
struct PendingLayout {
  int minor = 0;
  std::uint64_t versionHex = 0;
  std::uint64_t runtimePendingMain = kAbsent, interpPending = kAbsent;
  std::uint64_t calls = kAbsent, callSize = kAbsent, callCount = kAbsent, first = kAbsent, last = kAbsent;
  std::uint64_t lock = kAbsent, callsToDo = kAbsent, interpEvalBreaker = kAbsent;  // 3.12
  std::uint64_t mutex = kAbsent, npending = kAbsent, max = kAbsent, callFlags = kAbsent;  // 3.13
  std::uint64_t runtimeMainTstate = kAbsent, tstateEvalBreaker = kAbsent, callsToDoBit = 0;
};
const std::vector<PendingLayout>& builtPendingLayouts();

// What was queued: one copy of the code per queue, at `copies[i]` in the mapped page.
struct QueuedBootstrap {
  bool busy = false;  // nothing was changed: try again shortly
  std::vector<std::uint64_t> copies;
};

// Stops every thread (PTRACE_SEIZE + PTRACE_INTERRUPT), maps one page in the process with an
// injected mmap system call, copies `code` there twice and queues PyRun_SimpleString(copy) on
// the main thread's queue and on the interpreter's (whichever thread reaches the eval loop
// first runs it; the code must tolerate running twice), then detaches. Busy: a queue's lock
// was held by a stopped thread or a queue was full. `threadStates`: every PyThreadState of
// the interpreter (3.13 signals each one).
Result<QueuedBootstrap> queueBootstrap(remote::PyRemote& remote, const std::vector<std::uint64_t>& threadStates,
                                       const std::string& code);

// The copies still waiting in a queue (not yet popped, so no thread reads them) become `pass`,
// with every thread stopped: a session that ends before the agent came in leaves nothing to
// run. Returns how many were still queued.
Result<int> cancelBootstrap(remote::PyRemote& remote, const QueuedBootstrap& queued);

}  // namespace strata::python::attach
