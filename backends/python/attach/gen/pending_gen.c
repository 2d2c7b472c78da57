/* Prints where CPython keeps its pending-call queues and eval breakers, as C++ assignments to a
   PendingLayout; compiled with Py_BUILD_CORE against one interpreter's internal headers (3.10 to
   3.13). 3.10/3.11 have one queue, the interpreter's (run by the main thread alone), and no
   pycore_ceval_state.h. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_ceval_state.h"
#endif
#if PY_VERSION_HEX >= 0x030D0000
#include "internal/pycore_ceval.h"
#endif

#define F(field, value) printf("  P.%s = %llu;\n", #field, (unsigned long long)(value))

int main(void) {
  printf("  P.versionHex = 0x%lx;\n", (unsigned long)PY_VERSION_HEX);
  printf("  P.minor = %d;\n", PY_MINOR_VERSION);
#if PY_VERSION_HEX >= 0x030C0000
  F(runtimePendingMain, offsetof(_PyRuntimeState, ceval.pending_mainthread));
#endif
  F(interpPending, offsetof(PyInterpreterState, ceval.pending));
  F(calls, offsetof(struct _pending_calls, calls));
  F(callSize, sizeof(((struct _pending_calls*)0)->calls[0]));
  F(callCount, sizeof(((struct _pending_calls*)0)->calls) / sizeof(((struct _pending_calls*)0)->calls[0]));
  F(first, offsetof(struct _pending_calls, first));
#if PY_VERSION_HEX < 0x030D0000
  F(lock, offsetof(struct _pending_calls, lock));
  F(callsToDo, offsetof(struct _pending_calls, calls_to_do));
  F(last, offsetof(struct _pending_calls, last));
  F(interpEvalBreaker, offsetof(PyInterpreterState, ceval.eval_breaker));
#else
  F(mutex, offsetof(struct _pending_calls, mutex));
  F(npending, offsetof(struct _pending_calls, npending));
  F(max, offsetof(struct _pending_calls, max));
  F(last, offsetof(struct _pending_calls, next));
  F(callFlags, offsetof(struct _pending_call, flags));
  F(runtimeMainTstate, offsetof(_PyRuntimeState, main_tstate));
  F(tstateEvalBreaker, offsetof(PyThreadState, eval_breaker));
  F(callsToDoBit, _PY_CALLS_TO_DO_BIT);
#endif
  return 0;
}
