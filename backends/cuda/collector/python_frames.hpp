// The calling thread's Python frames read from its own memory inside a CUDA launch callback:
// no GIL, no reference count, no allocation, and no call into CPython but the lookup of the
// thread's own thread state (pthread_getspecific behind PyGILState_GetThisThreadState, the
// call faulthandler makes from its signal handler). PyTorch releases the GIL around every op
// it dispatches, so a launch callback almost never runs with it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata::cuda::collector {

// One Python frame as found at the launch: the code object it runs and where in it. Only the
// launching thread changes its own frames, and it is inside a C call while the callback runs,
// so the chain is still while it is read.
struct RawPythonFrame {
  std::uint64_t code = 0;     // the code object (alive as long as its frame runs)
  std::int32_t lasti = -1;    // instruction index in code units (-1: before the first)
  std::uint16_t evalCall = 0;  // 1 + which _PyEval_EvalFrameDefault call runs it, innermost first; 0: unknown
  std::uint16_t reserved = 0;
};

// A frame with its names and line, for the site message.
struct PythonFrameText {
  std::string function;  // co_qualname (co_name on 3.10)
  std::string file;      // co_filename
  int line = 0;
  std::uint16_t evalCall = 0;  // as in RawPythonFrame
};

class PythonFrames {
 public:
  PythonFrames();
  ~PythonFrames();
  PythonFrames(const PythonFrames&) = delete;
  PythonFrames& operator=(const PythonFrames&) = delete;

  // True once this process's CPython (3.10 to 3.14, an executable or a libpython, found with
  // dlsym) and its layout are known; decided at the first call.
  bool available();
  // What was found ("CPython 3.12.1, layout from ..."), or why no Python frames are read.
  std::string describe();

  // Up to `n` innermost frames of the calling thread after leaving out `skip` innermost ones;
  // 0 when the thread runs no Python (or the interpreter is finalizing). Safe to call from any
  // thread at any time; reads only the calling thread's own state.
  int top(RawPythonFrame* out, int n, int skip = 0);

  // Names and lines of frames `top` returned, read through process_vm_readv on this process so
  // that a code object freed in the meantime reads as "<code object gone>", never as a fault.
  // Where process_vm_readv is refused (a seccomp profile), `resolvesLater()` is false and the
  // caller resolves while the frames still run.
  void resolve(const RawPythonFrame* frames, int n, std::vector<PythonFrameText>& out);
  bool resolvesLater();

  // Py_AddPendingCall: `fn(arg)` runs on the main thread at its next pending-call check, with
  // the GIL. Needs no GIL and no thread state here. False when there is no Python or its queue
  // is full.
  bool addPendingCall(int (*fn)(void*), void* arg);
  // With the GIL only (inside a pending call): runs `code` in __main__'s namespace, as
  // PyRun_SimpleString does; exceptions are printed by CPython. -1 when absent.
  int runSimpleString(const char* code);

  struct State;

 private:
  std::unique_ptr<State> s_;
  std::once_flag once_;
};

}  // namespace strata::cuda::collector
