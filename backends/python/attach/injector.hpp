// Bringing the agent into a running CPython with no restart: on 3.10 to 3.13 a bootstrap string
// queued as a pending call (PyRun_SimpleString), on 3.14+ a script file named through PEP 768's
// remote-debugging interface; both written while every thread of the process is stopped.
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
  std::uint64_t lock = kAbsent, callsToDo = kAbsent, interpEvalBreaker = kAbsent;  // 3.10 to 3.12
  std::uint64_t mutex = kAbsent, npending = kAbsent, max = kAbsent, callFlags = kAbsent;  // 3.13
  std::uint64_t runtimeMainTstate = kAbsent, tstateEvalBreaker = kAbsent, callsToDoBit = 0;
};
const std::vector<PendingLayout>& builtPendingLayouts();

// What was queued: one copy of the code per queue, at `copies[i]` in the mapped page.
struct QueuedBootstrap {
  bool busy = false;  // nothing was changed: try again shortly
  std::vector<std::uint64_t> copies;
  bool disabled = false;  // 3.14+: the process runs with remote debugging off; nothing was changed
};

// Stops every thread (PTRACE_SEIZE + PTRACE_INTERRUPT), maps one page in the process with an
// injected mmap system call, copies `code` there once per queue and queues
// PyRun_SimpleString(copy) on each: 3.12+, the main thread's queue and the interpreter's
// (whichever thread reaches the eval loop first runs it; the code must tolerate running
// twice); 3.10/3.11, the interpreter's alone, which only the main thread runs (nothing runs it
// while the main thread is blocked outside the interpreter). Then detaches. Busy: a queue's
// lock was held by a stopped thread or a queue was full. `threadStates`: every PyThreadState
// of the interpreter (3.13 signals each one).
Result<QueuedBootstrap> queueBootstrap(remote::PyRemote& remote, const std::vector<std::uint64_t>& threadStates,
                                       const std::string& code);

// The copies still waiting in a queue (not yet popped, so no thread reads them) become `pass`,
// with every thread stopped: a session that ends before the agent came in leaves nothing to
// run. Returns how many were still queued.
Result<int> cancelBootstrap(remote::PyRemote& remote, const QueuedBootstrap& queued);

// Queues func(arg) on the interpreter's pending-call queue, which any thread runs, and signals
// thread state `threadState` (3.12: the interpreter's breaker, which every thread sees), in a
// process whose every thread another tracer already holds stopped. False: busy (a stopped
// thread holds the queue's lock, or it is full), nothing changed. An error on 3.10/3.11, where
// only the main thread runs pending calls.
Result<bool> queuePendingCall(remote::PyRemote& remote, std::uint64_t func, std::uint64_t arg, std::uint64_t threadState);

// 3.14+ (PEP 768, what sys.remote_exec does): with every thread stopped, writes `scriptPath`
// (as the process sees it) into each thread state's remote-debugger request, marks it pending
// and sets _PY_EVAL_PLEASE_STOP_BIT in its eval breaker; the next thread to check its breaker
// runs the file (in a namespace of its own; what it raises is reported as unraisable, so the
// code must catch everything). `copies` are the thread states asked. Busy: another debugger's
// request is still pending. Disabled: the process runs with remote debugging off
// (-X disable-remote-debug, PYTHON_DISABLE_REMOTE_DEBUG, or a CPython built without it).
inline constexpr std::uint64_t kEvalPleaseStopBit = 1u << 5;
Result<QueuedBootstrap> requestRemoteExec(remote::PyRemote& remote, const std::vector<std::uint64_t>& threadStates,
                                          const std::string& scriptPath);
// Clears the requests no thread has taken yet (every thread stopped). Returns how many.
Result<int> cancelRemoteExec(remote::PyRemote& remote, const QueuedBootstrap& queued);

}  // namespace strata::python::attach
