// sys.monitoring's events on CPython 3.10 and 3.11, which have only tracing: a C trace function
// (PyEval_SetTrace's Py_tracefunc, not sys.settrace's trampoline, which copies every traced
// frame's locals into a dict at every event) that the agent's event requests steer through
// _tracemon.py, the sys.monitoring look-alike the agent uses there.
//
// Where it traces: with breakpoints only, a PEP 523 frame-evaluation hook (strata_eval) turns
// a thread's trace on while a frame that needs events runs (its code has a breakpoint, or its
// start is not seen yet) and off when it returns, so the rest of the program runs untraced and,
// on 3.11, specialized; a step, a pause or exception filters trace every thread (and threads
// started later, through threading.settrace); with no event wanted, nothing is traced. Within
// a traced thread the cost is decided once per frame, at its call event: a frame whose code
// has events of its own or that global events cover gets `f_trace` set (a marker: this
// function never calls it) and `f_trace_lines` as lines are wanted; any other frame has its
// line events switched off. Frames already running when events change are updated from every
// thread's frame chain, as sys.monitoring re-instruments running code. Included by
// strata_core.cpp, inside its anonymous namespace.
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
constexpr long kFrameEvents = kEvLine | kEvRaise | kEvPyReturn | kEvPyYield | kEvInstruction;
bool everywhere = false;  // every thread traced (a step, a pause, exception filters; or no PEP 523 hook)
bool hooked = false;      // frames are evaluated through strata_eval

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
  // Traced by the hook only to see its start: the rest of the frame runs untraced.
  if (hooked && !everywhere && !(ev & kFrameEvents) && _PyEval_SetTrace(PyThreadState_Get(), nullptr, nullptr) < 0)
    PyErr_Clear();
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

// Whether a frame of `code` must run traced: events of its own, or a start the agent has not
// seen yet (a breakpoint's file, a function breakpoint's name).
bool needs_events(PyObject *code) {
  long ev = events_of(code);
  if (ev & kFrameEvents) return true;
  if (!(ev & (kEvPyStart | kEvPyResume))) return false;
  int off = PySet_Contains(tr.no_start, code);
  if (off < 0) {
    PyErr_Clear();
    return true;
  }
  return off == 0;
}

// Whether a thread runs a frame that has events of its own (a loop with a breakpoint).
bool thread_needs(PyThreadState *ts) {
  PyFrameObject *f = PyThreadState_GetFrame(ts);
  bool needs = false;
  while (f && !needs) {
    PyObject *code = code_of(f);
    needs = (events_of(code) & kFrameEvents) != 0;
    Py_DECREF(code);
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return needs;
}

// Every thread's running frames, as events now say (only frames of `only` when given); a thread
// running one that needs events is traced from now on.
void refresh_running(PyObject *only) {
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts)) {
    if (internal_ident(ts->thread_id)) continue;
    PyFrameObject *f = PyThreadState_GetFrame(ts);
    bool needs = false;
    while (f) {
      PyObject *code = code_of(f);
      if (!only || code == only) {
        long ev = events_of(code);
        mark_frame(f, ev);
        needs = needs || (ev & kFrameEvents);
      }
      Py_DECREF(code);
      PyFrameObject *back = PyFrame_GetBack(f);
      Py_DECREF(f);
      f = back;
    }
    if (needs && tr.installed && !ts->c_tracefunc && _PyEval_SetTrace(ts, trace_fn, nullptr) < 0) PyErr_Clear();
  }
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

// PEP 523: with breakpoints but no step, pause or exception filter, frames are evaluated through
// strata_eval, which traces the thread only while a frame that needs events runs (and what it
// calls); every other frame runs untraced, so the interpreter keeps its specialized
// instructions (3.11 runs every instruction unspecialized while a thread is traced).
#if PY_VERSION_HEX >= 0x030B0000
struct InterpFrameHead {  // the leading fields of 3.11's _PyInterpreterFrame
  PyObject *f_func, *f_globals, *f_builtins, *f_locals;
  PyCodeObject *f_code;
};
using EvalFrame = struct _PyInterpreterFrame;
PyObject *eval_code(EvalFrame *f) { return reinterpret_cast<PyObject *>(reinterpret_cast<InterpFrameHead *>(f)->f_code); }
#else
using EvalFrame = PyFrameObject;
PyObject *eval_code(EvalFrame *f) { return reinterpret_cast<PyObject *>(f->f_code); }
#endif


// Each frame runs traced exactly when it needs events: the thread's trace is switched for the
// frame and switched back when it returns (a callee of a frame with a breakpoint runs untraced,
// the frame traced again once it returns). A frame traced only to see its start is switched off
// at its call event once the agent has seen it (on_call).
PyObject *strata_eval(PyThreadState *ts, EvalFrame *f, int throwflag) {
  if (!hooked || everywhere || (ts->c_tracefunc && ts->c_tracefunc != trace_fn) || PyErr_Occurred() ||
      internal_ident(ts->thread_id))
    return _PyEval_EvalFrameDefault(ts, f, throwflag);
  bool was = ts->c_tracefunc == trace_fn;
  bool need = needs_events(eval_code(f));
  if (need != was && _PyEval_SetTrace(ts, need ? trace_fn : nullptr, nullptr) < 0) {
    PyErr_Clear();
    return _PyEval_EvalFrameDefault(ts, f, throwflag);
  }
  PyObject *result = _PyEval_EvalFrameDefault(ts, f, throwflag);
  if (!everywhere && (ts->c_tracefunc == trace_fn) != was && (!ts->c_tracefunc || ts->c_tracefunc == trace_fn)) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (_PyEval_SetTrace(ts, was ? trace_fn : nullptr, nullptr) < 0) PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
  return result;
}

bool hook_possible() {
  _PyFrameEvalFunction now = _PyInterpreterState_GetEvalFrameFunc(PyThreadState_Get()->interp);
  return now == _PyEval_EvalFrameDefault || now == strata_eval;
}

void set_hook(bool on) {
  if (on == hooked) return;
  PyInterpreterState *interp = PyThreadState_Get()->interp;
  if (on) {
    if (!hook_possible()) return;
    _PyInterpreterState_SetEvalFrameFunc(interp, strata_eval);
  } else if (_PyInterpreterState_GetEvalFrameFunc(interp) == strata_eval) {
    _PyInterpreterState_SetEvalFrameFunc(interp, _PyEval_EvalFrameDefault);
  }
  hooked = on;
}

void set_threading_boot(bool on) {
  PyObject *threading = PyImport_ImportModule("threading");
  if (!threading) {
    PyErr_Clear();
    return;
  }
  PyObject *hook = PyObject_GetAttrString(threading, "_trace_hook");
  Py_DECREF(threading);
  if (!hook) {
    PyErr_Clear();
    return;
  }
  if (on && hook == Py_None && tr.boot && !set_threading_hook(tr.boot)) PyErr_Clear();
  if (!on && hook == tr.boot && !set_threading_hook(Py_None)) PyErr_Clear();
  Py_DECREF(hook);
}

// Every thread traced, and threads started later.
void trace_everywhere() {
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts))
    if (!internal_ident(ts->thread_id) && !ts->c_tracefunc && _PyEval_SetTrace(ts, trace_fn, nullptr) < 0) PyErr_Clear();
  set_threading_boot(true);
  everywhere = true;
}

// Threads traced only where they need it (`keep`: a thread running a frame that needs events).
void trace_where_needed(bool keep) {
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts))
    if (ts->c_tracefunc == trace_fn && !(keep && thread_needs(ts)) && _PyEval_SetTrace(ts, nullptr, nullptr) < 0)
      PyErr_Clear();
  set_threading_boot(false);
  everywhere = false;
}

// As events now say: nothing traced when nothing is wanted; every thread for a step, a pause
// or exception filters (or where no PEP 523 hook can be set: another tool holds it); else only
// frames that need events, through the hook.
void settle() {
  bool wanted = tr.global != 0 || (tr.local && PyDict_GET_SIZE(tr.local) > 0);
  if (!wanted) {
    if (tr.installed) {
      set_hook(false);
      trace_where_needed(false);
    }
    tr.installed = false;
    return;
  }
  tr.installed = true;
  if ((tr.global & kFrameEvents) || (!hooked && !hook_possible())) {
    if (!everywhere) trace_everywhere();
    return;
  }
  set_hook(true);
  if (!hooked) {
    if (!everywhere) trace_everywhere();
    return;
  }
  if (everywhere) trace_where_needed(true);
}

// threading.settrace's hook, run by each new thread at its first call: the C trace function
// takes over from there (the hook itself is never called again on that thread).
PyObject *thread_boot(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (internal_ident(PyThread_get_thread_ident()) || !tr.installed || !everywhere) {
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
