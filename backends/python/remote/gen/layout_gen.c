/* Prints the CPython internal offsets Strata's remote reader needs, as C++ assignments; compiled
   with Py_BUILD_CORE against one interpreter's internal headers (3.10, 3.11, 3.12). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#include "internal/pycore_code.h"
#endif
#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_ceval_state.h"
#endif

#define F(field, value) printf("  L.%s = %llu;\n", #field, (unsigned long long)(value))

int main(void) {
  printf("  L.versionHex = 0x%lx;\n", (unsigned long)PY_VERSION_HEX);
  printf("  L.minor = %d;\n", PY_MINOR_VERSION);
  printf("  L.source = \"table from the headers of CPython %s\";\n", PY_VERSION);
  F(runtimeInterpretersHead, offsetof(_PyRuntimeState, interpreters.head));
  F(runtimeFinalizing, offsetof(_PyRuntimeState, _finalizing));
#if PY_VERSION_HEX < 0x030C0000
  printf("  L.gilPlace = GilPlace::Runtime;\n");
  F(gilOffset, offsetof(_PyRuntimeState, ceval.gil));
#else
  printf("  L.gilPlace = GilPlace::InterpreterPointer;\n");
  F(gilOffset, offsetof(PyInterpreterState, ceval.gil));
#endif
  F(gilLocked, offsetof(struct _gil_runtime_state, locked));
  F(gilLastHolder, offsetof(struct _gil_runtime_state, last_holder));
#if PY_VERSION_HEX < 0x030B0000
  F(interpThreadsHead, offsetof(PyInterpreterState, tstate_head));
#else
  F(interpThreadsHead, offsetof(PyInterpreterState, threads.head));
#endif
  F(tstateNext, offsetof(PyThreadState, next));
  F(tstateInterp, offsetof(PyThreadState, interp));
  F(tstateThreadId, offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030B0000
  printf("  L.frameObjects = true;\n");
  F(tstateFrame, offsetof(PyThreadState, frame));
  F(framePrevious, offsetof(PyFrameObject, f_back));
  F(frameCode, offsetof(PyFrameObject, f_code));
  F(frameLasti, offsetof(PyFrameObject, f_lasti));
  F(frameLocalsplus, offsetof(PyFrameObject, f_localsplus));
  F(codeVarnames, offsetof(PyCodeObject, co_varnames));
  F(codeNlocals, offsetof(PyCodeObject, co_nlocals));
  F(codeLinetable, offsetof(PyCodeObject, co_linetable));
#else
  F(tstateNativeThreadId, offsetof(PyThreadState, native_thread_id));
  F(tstateFrame, offsetof(PyThreadState, cframe));
  F(cframeCurrentFrame, offsetof(_PyCFrame, current_frame));
  F(framePrevious, offsetof(_PyInterpreterFrame, previous));
  F(frameCode, offsetof(_PyInterpreterFrame, f_code));
  F(frameInstr, offsetof(_PyInterpreterFrame, prev_instr));
  F(frameOwner, offsetof(_PyInterpreterFrame, owner));
  F(frameLocalsplus, offsetof(_PyInterpreterFrame, localsplus));
  F(codeQualname, offsetof(PyCodeObject, co_qualname));
  F(codeLocalsplusnames, offsetof(PyCodeObject, co_localsplusnames));
  F(codeAdaptive, offsetof(PyCodeObject, co_code_adaptive));
  F(codeLinetable, offsetof(PyCodeObject, co_linetable));
#endif
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  F(frameIsEntry, offsetof(_PyInterpreterFrame, is_entry));
#endif
  F(codeFilename, offsetof(PyCodeObject, co_filename));
  F(codeName, offsetof(PyCodeObject, co_name));
  F(codeFirstlineno, offsetof(PyCodeObject, co_firstlineno));
  F(tupleSize, offsetof(PyTupleObject, ob_base.ob_size));
  F(tupleItems, offsetof(PyTupleObject, ob_item));
  F(listSize, offsetof(PyListObject, ob_base.ob_size));
  F(dictUsed, offsetof(PyDictObject, ma_used));
  F(setUsed, offsetof(PySetObject, used));
  F(floatValue, offsetof(PyFloatObject, ob_fval));
#if PY_VERSION_HEX >= 0x030C0000
  printf("  L.longTagged = true;\n");
  F(longSize, offsetof(PyLongObject, long_value.lv_tag));
  F(longDigits, offsetof(PyLongObject, long_value.ob_digit));
#else
  F(longSize, offsetof(PyLongObject, ob_base.ob_size));
  F(longDigits, offsetof(PyLongObject, ob_digit));
#endif
  F(bytesSize, offsetof(PyBytesObject, ob_base.ob_size));
  F(bytesData, offsetof(PyBytesObject, ob_sval));
  F(unicodeLength, offsetof(PyASCIIObject, length));
  F(unicodeState, offsetof(PyASCIIObject, state));
  F(unicodeAsciiSize, sizeof(PyASCIIObject));
  F(unicodeCompactSize, sizeof(PyCompactUnicodeObject));
  F(typeName, offsetof(PyTypeObject, tp_name));
  return 0;
}
