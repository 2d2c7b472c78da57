// sys.monitoring's events on CPython 3.10 and 3.11, which have only tracing: a C trace function
// (PyEval_SetTrace's Py_tracefunc, not sys.settrace's trampoline, which copies every traced
// frame's locals into a dict at every event) that the agent's event requests steer through
// _tracemon.py, the sys.monitoring look-alike the agent uses there.
//
// The cost is decided once per frame, at its call event: a frame whose code has events of its
// own (a breakpoint's code, a stepping frame's caller) or that global events cover (a thread
// stepping or parking, exception breakpoints) gets `f_trace` set (a marker: this function never
// calls it) and `f_trace_lines` as lines are wanted; any other frame has its line events
// switched off and costs nothing more. With no event wanted anywhere the trace function is
// taken off every thread and the program runs untraced. Frames already running when events
// change are updated from every thread's frame chain, as sys.monitoring re-instruments
// running code. Included by strata_core.cpp, inside its anonymous namespace.
#pragma once

#if PY_VERSION_HEX < 0x030C0000

// Event bits, as sys.monitoring.events numbers them.
enum TraceEvent : long {
  kEvPyStart = 1, kEvPyResume = 2, kEvPyReturn = 4, kEvPyYield = 8, kEvLine = 32, kEvInstruction = 64,
  kEvRaise = 1024,
};
constexpr int kEventSlots = 17;

struct Tracer {
  long global = 0;
  PyObject *local = nullptr;     // dict: code -> events of its own
  PyObject *no_start = nullptr;  // set: codes whose start callback said DISABLE (until restart)
  PyObject *callbacks[kEventSlots] = {};
  PyObject *boot = nullptr;      // threading.settrace hook that puts the trace on a new thread
  bool installed = false;
};
Tracer tr;

int event_slot(long event) {
  for (int i = 0; i < kEventSlots; ++i)
    if (event == (1L << i)) return i;
  return -1;
}

#if PY_VERSION_HEX >= 0x030B0000
// 3.11 keeps struct _frame in its internal headers; these leading fields are the same in
// every 3.11 release.
struct FrameHead {
  PyObject_HEAD
  PyFrameObject *f_back;
  void *f_frame;
  PyObject *f_trace;
  int f_lineno;
  char f_trace_lines;
  char f_trace_opcodes;
};
FrameHead *head(PyFrameObject *f) { return reinterpret_cast<FrameHead *>(f); }
PyObject *code_of(PyFrameObject *f) { return reinterpret_cast<PyObject *>(PyFrame_GetCode(f)); }
int offset_of(PyFrameObject *f) { return PyFrame_GetLasti(f); }
#else
PyFrameObject *head(PyFrameObject *f) { return f; }
PyObject *code_of(PyFrameObject *f) {
  Py_INCREF(f->f_code);
  return reinterpret_cast<PyObject *>(f->f_code);
}
int offset_of(PyFrameObject *f) { return f->f_lasti < 0 ? -1 : f->f_lasti * 2; }
#endif

long events_of(PyObject *code) {
  long ev = tr.global;
  if (tr.local && PyDict_GET_SIZE(tr.local) > 0) {
    PyObject *own = PyDict_GetItemWithError(tr.local, code);
    if (own) ev |= PyLong_AsLong(own);
    else if (PyErr_Occurred()) PyErr_Clear();
  }
  return ev;
}

// What a frame of code with events `ev` reports from now on.
void mark_frame(PyFrameObject *frame, long ev) {
  bool lines = ev & kEvLine;
  bool any = lines || (ev & (kEvPyReturn | kEvPyYield | kEvRaise | kEvInstruction));
  auto *h = head(frame);
  if (any && !h->f_trace) {
    Py_INCREF(Py_True);
    h->f_trace = Py_True;  // a marker: only this trace function looks at it
  }
  h->f_trace_lines = lines ? 1 : 0;
  h->f_trace_opcodes = (ev & kEvInstruction) ? 1 : 0;
}

// A callback's failure does not surface in the program, where this runs; but an exception
// that is not an Exception (KeyboardInterrupt, SystemExit, an asynchronous one such as a repr
// time limit's) that came while the callback ran is the program's, and stays set.
void call_callback(long event, PyObject *const *args, Py_ssize_t n, PyObject *code) {
  int slot = event_slot(event);
  PyObject *cb = slot >= 0 ? tr.callbacks[slot] : nullptr;
  if (!cb) return;
  Py_INCREF(cb);
  PyObject *res = PyObject_Vectorcall(cb, args, n, nullptr);
  if (!res) {
    if (PyErr_ExceptionMatches(PyExc_Exception)) PyErr_WriteUnraisable(cb);
  } else if ((event == kEvPyStart || event == kEvPyResume) && g.disable && res == g.disable && tr.no_start) {
    if (PySet_Add(tr.no_start, code) < 0) PyErr_Clear();
  }
  Py_XDECREF(res);
  Py_DECREF(cb);
}

int on_call(PyFrameObject *frame) {
  PyObject *code = code_of(frame);
  long ev = events_of(code);
  int offset = offset_of(frame);
  long start = offset <= 0 ? kEvPyStart : kEvPyResume;
  if (ev & start) {
    int off = tr.no_start ? PySet_Contains(tr.no_start, code) : 0;
    if (off < 0) PyErr_Clear();
    if (off == 0) {
      PyObject *off_obj = PyLong_FromLong(offset < 0 ? 0 : offset);
      if (off_obj) {
        PyObject *args[2] = {code, off_obj};
        call_callback(start, args, 2, code);
        Py_DECREF(off_obj);
      } else {
        PyErr_Clear();
      }
      ev = events_of(code);  // the callback may have armed the code
    }
  }
  mark_frame(frame, ev);
  Py_DECREF(code);
  return 0;
}

int trace_event(PyFrameObject *frame, int what, PyObject *arg);

// An exception already set when an event comes (a Python function C code calls while raising)
// is kept as it was: nothing here may clear or replace it.
int trace_fn(PyObject *, PyFrameObject *frame, int what, PyObject *arg) {
  if (!PyErr_Occurred()) {
    trace_event(frame, what, arg);
    if (!PyErr_Occurred()) return 0;
    if (PyErr_ExceptionMatches(PyExc_Exception)) {
      PyErr_Clear();
      return 0;
    }
    return -1;  // raised in the program's frame, as it would have been without the trace
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  trace_event(frame, what, arg);
  if (PyErr_Occurred()) PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return 0;
}

int trace_event(PyFrameObject *frame, int what, PyObject *arg) {
  if (what == PyTrace_CALL) return on_call(frame);
  if (!head(frame)->f_trace) return 0;
  if (what != PyTrace_LINE && what != PyTrace_RETURN && what != PyTrace_EXCEPTION && what != PyTrace_OPCODE) return 0;
  PyObject *code = code_of(frame);
  long ev = events_of(code);
  if (what == PyTrace_LINE && (ev & kEvLine)) {
    PyObject *line = PyLong_FromLong(PyFrame_GetLineNumber(frame));
    if (line) {
      PyObject *args[2] = {code, line};
      call_callback(kEvLine, args, 2, code);
      Py_DECREF(line);
    } else {
      PyErr_Clear();
    }
  } else if ((what == PyTrace_RETURN && arg && (ev & kEvPyReturn)) || (what == PyTrace_EXCEPTION && (ev & kEvRaise)) ||
             (what == PyTrace_OPCODE && (ev & kEvInstruction))) {
    PyObject *offset = PyLong_FromLong(offset_of(frame));
    if (offset) {
      // The exception event's argument is (type, value, traceback), normalized.
      PyObject *value = what == PyTrace_EXCEPTION && PyTuple_Check(arg) && PyTuple_GET_SIZE(arg) > 2
                            ? PyTuple_GET_ITEM(arg, 1)
                            : arg;
      // The traceback so far, as sys.monitoring's RAISE sees it on the exception (tracing keeps
      // it apart until the exception is caught): one entry where it was raised, one more for
      // each frame it unwinds into.
      if (value != arg && PyExceptionInstance_Check(value) && PyTraceBack_Check(PyTuple_GET_ITEM(arg, 2)))
        PyException_SetTraceback(value, PyTuple_GET_ITEM(arg, 2));
      PyObject *args[3] = {code, offset, value};
      long event = what == PyTrace_RETURN ? kEvPyReturn : what == PyTrace_EXCEPTION ? kEvRaise : kEvInstruction;
      call_callback(event, args, what == PyTrace_OPCODE ? 2 : 3, code);
      Py_DECREF(offset);
    } else {
      PyErr_Clear();
    }
  }
  Py_DECREF(code);
  return 0;
}

bool internal_ident(unsigned long ident) {
  for (unsigned long t : g.internal)
    if (t == ident) return true;
  return false;
}

// Every thread's running frames, as events now say (only frames of `only` when given).
void refresh_running(PyObject *only) {
  PyObject *tops = _PyThread_CurrentFrames();
  if (!tops) {
    PyErr_Clear();
    return;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(tops, &pos, &key, &value)) {
    PyFrameObject *f = reinterpret_cast<PyFrameObject *>(value);
    Py_INCREF(f);
    while (f) {
      PyObject *code = code_of(f);
      if (!only || code == only) mark_frame(f, events_of(code));
      Py_DECREF(code);
      PyFrameObject *back = PyFrame_GetBack(f);
      Py_DECREF(f);
      f = back;
    }
  }
  Py_DECREF(tops);
}

// Who traces a thread already (a profiler, coverage, another debugger): the trace object's
// repr and the thread; None: nobody.
PyObject *foreign_tracer() {
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts)) {
    if (!ts->c_tracefunc || ts->c_tracefunc == trace_fn) continue;
    PyObject *what = ts->c_traceobj ? PyObject_Repr(ts->c_traceobj) : PyUnicode_FromString("a C trace function");
    if (!what) return nullptr;
    PyObject *out = PyUnicode_FromFormat("%U on thread %lu", what, ts->thread_id);
    Py_DECREF(what);
    return out;
  }
  Py_RETURN_NONE;
}

bool set_threading_hook(PyObject *hook) {
  PyObject *threading = PyImport_ImportModule("threading");
  if (!threading) return false;
  PyObject *res = PyObject_CallMethod(threading, "settrace", "O", hook);
  Py_DECREF(threading);
  Py_XDECREF(res);
  return res != nullptr;
}

void install() {
  if (tr.installed) return;
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts))
    if (!internal_ident(ts->thread_id) && !ts->c_tracefunc && _PyEval_SetTrace(ts, trace_fn, nullptr) < 0) PyErr_Clear();
  if (tr.boot && !set_threading_hook(tr.boot)) PyErr_Clear();
  tr.installed = true;
}

void uninstall() {
  if (!tr.installed) return;
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts))
    if (ts->c_tracefunc == trace_fn && _PyEval_SetTrace(ts, nullptr, nullptr) < 0) PyErr_Clear();
  PyObject *threading = PyImport_ImportModule("threading");
  if (threading) {
    PyObject *hook = PyObject_GetAttrString(threading, "_trace_hook");
    if (hook && hook == tr.boot && !set_threading_hook(Py_None)) PyErr_Clear();
    Py_XDECREF(hook);
    Py_DECREF(threading);
  }
  PyErr_Clear();
  tr.installed = false;
}

// The trace is on while any event is wanted.
void settle() {
  bool wanted = tr.global != 0 || (tr.local && PyDict_GET_SIZE(tr.local) > 0);
  if (wanted) install();
  else uninstall();
}

// threading.settrace's hook, run by each new thread at its first call: the C trace function
// takes over from there (the hook itself is never called again on that thread).
PyObject *thread_boot(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (internal_ident(PyThread_get_thread_ident()) || !tr.installed) {
    PyEval_SetTrace(nullptr, nullptr);
    Py_RETURN_NONE;
  }
  PyEval_SetTrace(trace_fn, nullptr);
  if (nargs >= 1 && PyFrame_Check(args[0]) &&
      trace_fn(nullptr, reinterpret_cast<PyFrameObject *>(args[0]), PyTrace_CALL, nullptr) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef kBootMethod = {"thread_boot", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(thread_boot)),
                           METH_FASTCALL, "threading.settrace hook of the tracer (3.10, 3.11)."};

#endif  // PY_VERSION_HEX < 0x030C0000
