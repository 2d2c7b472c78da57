// _strata_core: the sys.monitoring callbacks that run on every event, kept in raw C.
//
// The hot callbacks (PY_START, LINE, JUMP) are METH_FASTCALL functions written against the
// CPython C API because a pybind11 call costs ~100 ns where a raw one costs ~20 ns, and
// they run on every line of armed code. Everything that is not per-event (state set-up,
// 3.12's locals write-back, async exceptions for repr time limits) goes through pybind11.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Python.h>
#include <frameobject.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace {

// Entry kinds in the per-line table: decided once when a breakpoint is armed, so a hit
// needs no Python-level dispatch.
enum EntryKind : long { kSlow = 0, kCondition = 1, kLog = 2, kLogNames = 3 };

// Strong references owned by the module; replaced as a whole by configure().
struct State {
  PyObject *codes = nullptr;      // dict: code -> dict(line -> entry tuple)
  PyObject *files = nullptr;      // dict: filename -> anything (files with breakpoints)
  PyObject *funcnames = nullptr;  // set of co_name strings with function breakpoints
  PyObject *on_start = nullptr;   // callable(code) -> None | DISABLE
  PyObject *on_line = nullptr;    // callable(code, line, status) -> None | DISABLE
  PyObject *log_queue = nullptr;  // list of (bp_id, text) appended by log points
  PyObject *disable = nullptr;    // sys.monitoring.DISABLE
  PyObject *last_log_bp = nullptr;  // the breakpoint whose lines the queue ends with
  int step_mode = 0;              // non-zero: every event goes to Python (stepping, pausing)
  // The agent's own threads: while events are on for stepping or parking, their lines
  // are answered here instead of costing a Python call each.
  std::vector<unsigned long> internal;
  PyObject *pkg_dir = nullptr;    // the agent's own folder: its lines never need events
  PyObject *on_native_step = nullptr;  // callable(tid): mixed mode's step armed from C/C++
  // 3.11's patched code (_codepatch.py): the first call in a patched code object asks
  // on_patched(code) to arm it; codes in patch_stale are no longer in use; on_exec(code) sees a
  // module body of a file with breakpoints before it runs.
  PyObject *on_patched = nullptr;
  PyObject *patch_stale = nullptr;
  PyObject *on_exec = nullptr;
};

State g;

PyObject *disable_result() {
  PyObject *d = g.disable ? g.disable : Py_None;
  Py_INCREF(d);
  return d;
}

#if PY_VERSION_HEX < 0x030C0000
// PyFrame_GetVar (3.12+) on 3.10 and 3.11: a local variable of the frame, from its locals.
PyObject *PyFrame_GetVar(PyFrameObject *frame, PyObject *name) {
#if PY_VERSION_HEX >= 0x030B0000
  PyObject *locals = PyFrame_GetLocals(frame);
#else
  if (PyFrame_FastToLocalsWithError(frame) < 0) return nullptr;
  PyObject *locals = frame->f_locals;
  Py_XINCREF(locals);
#endif
  if (!locals) return nullptr;
  PyObject *value = PyObject_GetItem(locals, name);
  Py_DECREF(locals);
  if (!value && PyErr_ExceptionMatches(PyExc_KeyError)) {
    PyErr_Clear();
    PyErr_Format(PyExc_NameError, "variable %R does not exist", name);
  }
  return value;
}
#endif

// A log message whose every {expression} is a plain local name: (lit, name, lit, ..., lit)
// is formatted here without running Python code. nullptr with the error cleared on failure.
PyObject *format_names(PyObject *parts) {
  PyFrameObject *frame = PyEval_GetFrame();
  if (!frame) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(parts);
  PyObject *pieces = PyTuple_New(n);
  if (!pieces) { PyErr_Clear(); return nullptr; }
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *part = PyTuple_GET_ITEM(parts, i);
    PyObject *piece;
    if (i % 2 == 0) {
      Py_INCREF(part);
      piece = part;
    } else {
      PyObject *value = PyFrame_GetVar(frame, part);
      if (!value) { Py_DECREF(pieces); PyErr_Clear(); return nullptr; }
      piece = PyObject_Format(value, nullptr);
      Py_DECREF(value);
      if (!piece) { Py_DECREF(pieces); PyErr_Clear(); return nullptr; }
    }
    PyTuple_SET_ITEM(pieces, i, piece);
  }
  PyObject *empty = PyUnicode_New(0, 0);
  PyObject *text = empty ? PyUnicode_Join(empty, pieces) : nullptr;
  Py_XDECREF(empty);
  Py_DECREF(pieces);
  if (!text) PyErr_Clear();
  return text;
}

PyObject *call_on_line(PyObject *code, PyObject *line, long status) {
  if (!g.on_line) return disable_result();
  PyObject *st = PyLong_FromLong(status);
  if (!st) return nullptr;
  PyObject *argv[3] = {code, line, st};
  PyObject *res = PyObject_Vectorcall(g.on_line, argv, 3, nullptr);
  Py_DECREF(st);
  return res;
}

// Calls entry's compiled function with the frame's locals named in argnames.
// Returns a new reference, or nullptr with the error cleared when anything fails, so the
// caller falls back to the Python path which reports the error properly.
PyObject *call_entry_fn(PyObject *fn, PyObject *argnames) {
  PyFrameObject *frame = PyEval_GetFrame();
  if (!frame) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(argnames);
  PyObject *small[8];
  PyObject **argv = small;
  if (n > 8) {
    argv = static_cast<PyObject **>(PyMem_Malloc(sizeof(PyObject *) * n));
    if (!argv) { PyErr_Clear(); return nullptr; }
  }
  Py_ssize_t got = 0;
  PyObject *res = nullptr;
  for (; got < n; ++got) {
    argv[got] = PyFrame_GetVar(frame, PyTuple_GET_ITEM(argnames, got));
    if (!argv[got]) break;
  }
  if (got == n) res = PyObject_Vectorcall(fn, argv, n, nullptr);
  for (Py_ssize_t i = 0; i < got; ++i) Py_DECREF(argv[i]);
  if (argv != small) PyMem_Free(argv);
  if (!res) PyErr_Clear();
  return res;
}

PyObject *handle_entry(PyObject *code, PyObject *line_obj, PyObject *entry);

// The decision for one armed line: stop (Python), skip, or log without leaving C.
PyObject *handle_line(PyObject *code, PyObject *line_obj) {
  PyObject *lines = PyDict_GetItemWithError(g.codes, code);
  if (!lines) {
    if (PyErr_Occurred()) return nullptr;
    return disable_result();
  }
  PyObject *entry = PyDict_GetItemWithError(lines, line_obj);
  if (!entry) {
    if (PyErr_Occurred()) return nullptr;
    return disable_result();
  }
  // Conditions and log messages run Python code, during which another thread may replace
  // the breakpoint tables: the entry is held for the whole decision.
  Py_INCREF(entry);
  PyObject *res = handle_entry(code, line_obj, entry);
  Py_DECREF(entry);
  return res;
}

PyObject *handle_entry(PyObject *code, PyObject *line_obj, PyObject *entry) {
  long kind = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
  if (kind == kCondition) {
    PyObject *res = call_entry_fn(PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2));
    if (res) {
      int truth = PyObject_IsTrue(res);
      Py_DECREF(res);
      if (truth == 0) Py_RETURN_NONE;
      if (truth > 0) return call_on_line(code, line_obj, 1);
      PyErr_Clear();
    }
    return call_on_line(code, line_obj, 0);
  }
  if (kind == kLog || kind == kLogNames) {
    PyObject *text = kind == kLog
        ? call_entry_fn(PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2))
        : format_names(PyTuple_GET_ITEM(entry, 1));
    if (text) {
      // The queue is flat: a breakpoint object, then the lines it logged, as plain strings
      // (no tuple and no GC-tracked object per hit). A breakpoint is written again only
      // when the logging breakpoint changes.
      PyObject *bp = PyTuple_GET_ITEM(entry, 3);
      int ok = g.log_queue ? 0 : -1;
      if (bp != g.last_log_bp) {
        ok = PyList_Append(g.log_queue, bp);
        if (ok == 0) {
          Py_INCREF(bp);
          Py_XSETREF(g.last_log_bp, bp);
        }
      }
      if (ok == 0) ok = PyList_Append(g.log_queue, text);
      Py_DECREF(text);
      if (ok == 0) Py_RETURN_NONE;
      if (PyErr_Occurred()) PyErr_Clear();
    }
    return call_on_line(code, line_obj, 0);
  }
  return call_on_line(code, line_obj, 0);
}

bool on_internal_thread() {
  unsigned long me = PyThread_get_thread_ident();
  for (unsigned long t : g.internal)
    if (t == me) return true;
  return false;
}

// An agent thread's line: the agent's own code is switched off at that spot for good (no
// thread ever stops there); shared code (json, threading) stays on for user threads.
PyObject *internal_line_result(PyObject *code) {
  if (g.pkg_dir && PyCode_Check(code)) {
    PyObject *fn = reinterpret_cast<PyCodeObject *>(code)->co_filename;
    if (PyUnicode_Check(fn) && PyUnicode_Tailmatch(fn, g.pkg_dir, 0, PY_SSIZE_T_MAX, -1) == 1)
      return disable_result();
  }
  Py_RETURN_NONE;
}

PyObject *cb_line(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 2) return disable_result();
  if (g.step_mode) {
    if (on_internal_thread()) return internal_line_result(args[0]);
    return call_on_line(args[0], args[1], 0);
  }
  if (!g.codes) return disable_result();
  return handle_line(args[0], args[1]);
}

// Back-edges within one line (`while x: x -= 1`) raise no LINE event on 3.12 or 3.13,
// so a backward JUMP that lands on its own line stands in for one.
PyObject *cb_jump(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 3 || !PyCode_Check(args[0])) return disable_result();
  long src = PyLong_AsLong(args[1]);
  long dst = PyLong_AsLong(args[2]);
  if (dst >= src) return disable_result();
  auto *co = reinterpret_cast<PyCodeObject *>(args[0]);
  int dst_line = PyCode_Addr2Line(co, static_cast<int>(dst));
  if (dst_line < 0 || dst_line != PyCode_Addr2Line(co, static_cast<int>(src)))
    return disable_result();
  PyObject *line_obj = PyLong_FromLong(dst_line);
  if (!line_obj) return nullptr;
  PyObject *res;
  if (g.step_mode && on_internal_thread()) res = internal_line_result(args[0]);
  else if (g.step_mode) res = call_on_line(args[0], line_obj, 0);
  else if (!g.codes) res = disable_result();
  else res = handle_line(args[0], line_obj);
  Py_DECREF(line_obj);
  return res;
}

PyObject *call_on_start(PyObject *code) {
  if (!g.on_start) return disable_result();
  return PyObject_Vectorcall(g.on_start, &code, 1, nullptr);
}

// Runs once per code object between restart_events() calls: code in a file with
// breakpoints, or named like a function breakpoint, goes to Python to be armed.
PyObject *cb_py_start(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1 || !PyCode_Check(args[0]) || !g.codes) return disable_result();
  auto *co = reinterpret_cast<PyCodeObject *>(args[0]);
  if (g.funcnames && PySet_GET_SIZE(g.funcnames) > 0) {
    int has = PySet_Contains(g.funcnames, co->co_name);
    if (has < 0) return nullptr;
    if (has) return call_on_start(args[0]);
  }
  int armed = PyDict_Contains(g.codes, args[0]);
  if (armed < 0) return nullptr;
  if (armed) return disable_result();
  int in_file = PyDict_Contains(g.files, co->co_filename);
  if (in_file < 0) return nullptr;
  if (in_file) return call_on_start(args[0]);
  return disable_result();
}

PyMethodDef kHotMethods[] = {
    {"py_start", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(cb_py_start)),
     METH_FASTCALL, "PY_START/PY_RESUME callback."},
    {"line", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(cb_line)),
     METH_FASTCALL, "LINE callback."},
    {"jump", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(cb_jump)),
     METH_FASTCALL, "JUMP callback."},
    {nullptr, nullptr, 0, nullptr}};

#include "trace_core.hpp"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
// The call _codepatch.py writes where a breakpoint line of a patched code object is entered:
// the line as a LINE event would report it, unless the frame's lines are traced already (a
// step), where the trace reports it. What the callbacks raise is handled as the trace
// function handles it: an Exception stays out of the program, anything else is the program's.
PyObject *cb_patched_line(PyObject *, PyObject *line) {
  if (!g.codes || !g.on_patched) Py_RETURN_NONE;
  PyThreadState *ts = PyThreadState_Get();
  if (internal_ident(ts->thread_id)) Py_RETURN_NONE;
  PyFrameObject *frame = PyEval_GetFrame();
  if (!frame) Py_RETURN_NONE;
  if (ts->c_tracefunc == trace_fn && head(frame)->f_trace && head(frame)->f_trace_lines) Py_RETURN_NONE;
  PyObject *code = code_of(frame);
  PyObject *res = nullptr;
  // As the interpreter does around a trace function: nothing the agent runs from here (its
  // stop, a condition, a log message) is traced, even where the stop turns tracing on for
  // the next step; the frame is traced from its next instruction.
  PyThreadState_EnterTracing(ts);
  int armed = PyDict_Contains(g.codes, code);
  if (armed == 0) {
    int stale = g.patch_stale ? PySet_Contains(g.patch_stale, code) : 0;
    if (stale == 0) {
      PyObject *hook = g.on_patched;
      Py_INCREF(hook);
      PyObject *got = PyObject_CallOneArg(hook, code);
      Py_DECREF(hook);
      armed = got ? PyObject_IsTrue(got) : -1;
      Py_XDECREF(got);
    } else {
      armed = stale < 0 ? -1 : 0;
    }
  }
  if (armed > 0) {
    res = g.step_mode ? call_on_line(code, line, 0) : handle_line(code, line);
  } else if (armed == 0) {
    res = Py_None;
    Py_INCREF(res);
  }
  PyThreadState_LeaveTracing(ts);
  Py_DECREF(code);
  if (res) {
    Py_DECREF(res);
    Py_RETURN_NONE;
  }
  if (PyErr_ExceptionMatches(PyExc_Exception)) {
    PyErr_Clear();
    Py_RETURN_NONE;
  }
  return nullptr;
}

PyMethodDef kPatchMethod = {"patched_line", cb_patched_line, METH_O,
                            "The call written into 3.11 code where a breakpoint line is entered."};

// The `exec` audit event (builtins.exec: importlib's module bodies, runpy, exec()): a module
// body of a file with breakpoints is shown to the patcher before it runs. Never fails the exec.
int audit_exec(const char *event, PyObject *args, void *) {
  if (!g.on_exec || !g.files || event[0] != 'e' || std::strcmp(event, "exec") != 0) return 0;
  if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 1) return 0;
  PyObject *code = PyTuple_GET_ITEM(args, 0);
  if (!PyCode_Check(code) || internal_ident(PyThread_get_thread_ident())) return 0;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  int in = PyDict_Contains(g.files, reinterpret_cast<PyCodeObject *>(code)->co_filename);
  if (in > 0) {
    PyThreadState *ts = PyThreadState_Get();
    PyThreadState_EnterTracing(ts);
    PyObject *hook = g.on_exec;
    Py_INCREF(hook);
    PyObject *res = PyObject_CallOneArg(hook, code);
    if (!res) PyErr_WriteUnraisable(hook);
    Py_XDECREF(res);
    Py_DECREF(hook);
    PyThreadState_LeaveTracing(ts);
  }
  if (PyErr_Occurred()) PyErr_Clear();
  PyErr_Restore(type, value, tb);
  return 0;
}
bool audit_added = false;
#endif

void replace(PyObject *&slot, PyObject *value) {
  Py_XINCREF(value);
  PyObject *old = slot;
  slot = value;
  Py_XDECREF(old);
}

}  // namespace

// Mixed mode: how a Python step armed on a thread is taken while the native debugger runs that
// thread through C/C++ code: 0 as armed, 1 held (Python lines run on without stopping, the step
// stays armed: a C++ `next` over a callback), 2 dropped (a continue). The native debugger writes
// slot tid % 64 with every thread stopped, so no Python code has to run for it; the agent reads
// it on the stepping thread's lines and clears it when it arms a new step.
//
// A C/C++ stop no Python step led to (a C++ breakpoint) has no Python step to take: there the
// native debugger writes mode 3 (asked) and queues strata_mixed_pending(tid) as a CPython
// pending call, which the interpreter runs with the GIL at its next check of the eval breaker
// (after the C++ function returns to its Python caller, or as a Python callback starts); the
// agent then arms a step into the next Python line for that thread, as if a Python step had led
// there, which the table steers from then on. A call that comes after the step was dropped
// (mode 2) arms nothing.
struct StrataMixedStep {
  std::int64_t tid;
  std::int64_t mode;
};
extern "C" {
__attribute__((visibility("default"), used)) volatile StrataMixedStep strata_mixed_steps[64] = {};

__attribute__((visibility("default"), used)) int strata_mixed_pending(void *arg) {
  PyObject *hook = g.on_native_step;
  if (!hook) return 0;
  Py_INCREF(hook);
  PyObject *tid = PyLong_FromLongLong(static_cast<long long>(reinterpret_cast<std::intptr_t>(arg)));
  PyObject *res = tid ? PyObject_CallOneArg(hook, tid) : nullptr;
  // What the hook raises must not surface in the program's own code, where this call runs.
  if (!res) PyErr_WriteUnraisable(hook);
  Py_XDECREF(res);
  Py_XDECREF(tid);
  Py_DECREF(hook);
  return 0;
}
}

PYBIND11_MODULE(_strata_core, m) {
  m.doc() = "Strata agent: sys.monitoring hot callbacks";
  for (PyMethodDef *def = kHotMethods; def->ml_name; ++def) {
    PyObject *fn = PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.add_object(def->ml_name, py::reinterpret_steal<py::object>(fn));
  }
  m.def("configure",
        [](py::dict codes, py::dict files, py::set funcnames, py::object on_start,
           py::object on_line, py::list log_queue, py::object disable) {
          replace(g.codes, codes.ptr());
          replace(g.files, files.ptr());
          replace(g.funcnames, funcnames.ptr());
          replace(g.on_start, on_start.ptr());
          replace(g.on_line, on_line.ptr());
          replace(g.log_queue, log_queue.ptr());
          replace(g.last_log_bp, nullptr);
          replace(g.disable, disable.ptr());
        });
  m.def("reset", []() {
    for (PyObject **slot : {&g.codes, &g.files, &g.funcnames, &g.on_start, &g.on_line,
                            &g.log_queue, &g.disable, &g.last_log_bp, &g.on_native_step,
                            &g.on_patched, &g.patch_stale, &g.on_exec})
      replace(*slot, nullptr);
    g.step_mode = 0;
    g.internal.clear();
    replace(g.pkg_dir, nullptr);
  });
  m.def("set_step_mode", [](int on) { g.step_mode = on; });
  m.def("set_internal_threads", [](std::vector<unsigned long> idents, py::object pkg_dir) {
    g.internal = std::move(idents);
    replace(g.pkg_dir, pkg_dir.is_none() ? nullptr : pkg_dir.ptr());
  });
  m.def("step_mode", []() { return g.step_mode; });
  m.def("mixed_step", [](std::int64_t tid) -> std::int64_t {
    const volatile StrataMixedStep &s = strata_mixed_steps[static_cast<std::uint64_t>(tid) % 64];
    return s.tid == tid ? s.mode : 0;
  });
  m.def("set_native_step_hook", [](py::object hook) { replace(g.on_native_step, hook.is_none() ? nullptr : hook.ptr()); });
  m.def("mixed_step_clear", [](std::int64_t tid) {
    volatile StrataMixedStep &s = strata_mixed_steps[static_cast<std::uint64_t>(tid) % 64];
    if (s.tid == tid) s.mode = 0;
  });
#if PY_VERSION_HEX < 0x030C0000
  // 3.10 and 3.11: sys.monitoring's events from the C trace function (trace_core.hpp).
  tr.local = PyDict_New();
  tr.no_start = PySet_New(nullptr);
  tr.boot = PyCFunction_NewEx(&kBootMethod, nullptr, m.attr("__name__").ptr());
  if (!tr.local || !tr.no_start || !tr.boot) throw py::error_already_set();
  m.attr("TRACING") = true;
  m.def("trace_callback", [](long event, py::object func) {
    int slot = event_slot(event);
    if (slot < 0) throw py::value_error("not one event");
    replace(tr.callbacks[slot], func.is_none() ? nullptr : func.ptr());
  });
  m.def("trace_set_events", [](long events) {
    long old = std::exchange(tr.global, events);
    settle();
    if ((old ^ events) & kFrameEvents) refresh_running(nullptr);
  });
  m.def("trace_get_events", []() { return tr.global; });
  m.def("trace_set_local", [](py::object code, long events) {
    if (events) {
      py::int_ ev(events);
      if (PyDict_SetItem(tr.local, code.ptr(), ev.ptr()) < 0) throw py::error_already_set();
    } else if (PyDict_DelItem(tr.local, code.ptr()) < 0) {
      PyErr_Clear();
    }
    settle();
    refresh_running(code.ptr());
  });
  m.def("trace_restart", []() { PySet_Clear(tr.no_start); });
  m.def("trace_foreign", []() {
    PyObject *who = foreign_tracer();
    if (!who) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(who);
  });
  m.def("trace_reset", []() {
    tr.global = 0;
    PyDict_Clear(tr.local);
    PySet_Clear(tr.no_start);
    for (PyObject *&cb : tr.callbacks) replace(cb, nullptr);
    settle();
  });
  m.def("trace_installed", []() { return tr.installed; });
  // Whether frames go through the PEP 523 hook now, and whether every thread is traced.
  m.def("trace_hooked", []() { return hooked; });
  m.def("trace_everywhere", []() { return everywhere; });
  m.def("trace_internal_thread", []() {
    unsigned long me = PyThread_get_thread_ident();
    if (!internal_ident(me)) g.internal.push_back(me);
    PyEval_SetTrace(nullptr, nullptr);
  });
  // Whether thread `thread_id` has an asynchronous exception waiting (see _inspect.ReprGuard.end).
  m.def("async_pending", [](unsigned long thread_id) {
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_Get()->interp); ts; ts = PyThreadState_Next(ts))
      if (ts->thread_id == thread_id) return ts->async_exc != nullptr;
    return false;
  });
#if PY_VERSION_HEX >= 0x030B0000
  // 3.11: breakpoints written into code (_codepatch.py).
  {
    PyObject *fn = PyCFunction_NewEx(&kPatchMethod, nullptr, m.attr("__name__").ptr());
    if (!fn) throw py::error_already_set();
    m.add_object("patched_line", py::reinterpret_steal<py::object>(fn));
  }
  m.def("patch_setup", [](py::object on_patched, py::object stale, py::object on_exec) {
    replace(g.on_patched, on_patched.is_none() ? nullptr : on_patched.ptr());
    replace(g.patch_stale, PySet_Check(stale.ptr()) ? stale.ptr() : nullptr);
    replace(g.on_exec, on_exec.is_none() ? nullptr : on_exec.ptr());
    if (g.on_exec && !audit_added) {
      if (PySys_AddAuditHook(audit_exec, nullptr) < 0) throw py::error_already_set();
      audit_added = true;
    }
  });
  // A code object's constant replaced in place: a module body that is about to run (or runs)
  // then makes its functions from the replacement.
  m.def("swap_const", [](py::object code, Py_ssize_t index, py::object value) {
    if (!PyCode_Check(code.ptr())) throw py::type_error("code object expected");
    PyObject *consts = reinterpret_cast<PyCodeObject *>(code.ptr())->co_consts;
    if (!PyTuple_Check(consts) || index < 0 || index >= PyTuple_GET_SIZE(consts)) throw py::index_error("no such constant");
    PyObject *old = PyTuple_GET_ITEM(consts, index);
    Py_INCREF(value.ptr());
    PyTuple_SET_ITEM(consts, index, value.ptr());
    Py_DECREF(old);
  });
#endif
#else
  m.attr("TRACING") = false;
#endif
  // 3.12's frame.f_locals is a snapshot; writes must be pushed back into the fast locals.
  // 3.13's f_locals writes through (PEP 667), so there is nothing to do there.
  m.def("locals_to_fast", [](py::object frame) {
#if PY_VERSION_HEX < 0x030D0000
    if (!PyFrame_Check(frame.ptr())) throw py::type_error("frame expected");
    PyFrame_LocalsToFast(reinterpret_cast<PyFrameObject *>(frame.ptr()), 0);
    if (PyErr_Occurred()) throw py::error_already_set();
#else
    (void)frame;
#endif
  });
  // Interrupts a repr that runs past its time limit on the inspecting thread.
  m.def("async_raise", [](unsigned long thread_id, py::object exc_type) {
    return PyThreadState_SetAsyncExc(thread_id, exc_type.is_none() ? nullptr : exc_type.ptr());
  });
}
