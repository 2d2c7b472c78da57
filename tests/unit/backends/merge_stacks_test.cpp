// Splicing a thread's Python frames among its native ones (strata stacks, attach by pid):
// by where each eval call keeps its entry frame on the C stack (3.12+), else by name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "strata/python/remote/py_remote.hpp"

using namespace strata::python::remote;

namespace {

PythonFrame code(const char* name, std::size_t call) {
  PythonFrame f;
  f.function = name;
  f.evalIndex = call;
  return f;
}

PythonFrame shim(std::uint64_t at, std::size_t call) {
  PythonFrame f;
  f.isShim = true;
  f.frameAddr = at;
  f.evalIndex = call;
  return f;
}

// The merged order as text: Python frames by function ("shim" for entry frames), native
// frames by name.
std::string order(const std::vector<MergedFrame>& merged, const std::vector<std::string>& native,
                  const PythonThread& thread) {
  std::string out;
  for (const auto& m : merged) {
    const PythonFrame* f = m.python ? &thread.frames[m.index] : nullptr;
    out += (out.empty() ? "" : " ") +
           (m.python ? (f->isShim ? std::string("shim") : "py:" + f->function) : native[m.index]);
  }
  return out;
}

}  // namespace

TEST_CASE("3.12+: each eval call is the native frame whose stack area holds its entry frame, with no symbol") {
  // Innermost first: a sleep in libc, the inner eval call (stripped: no name), a C function
  // calling back into Python, the outer eval call, main.
  std::vector<std::string> native{"libc.so.6!clock_nanosleep", "python3.14+0x452c15", "python3.14+0x5d5529",
                                  "python3.14+0x452c15", "python3.14!Py_RunMain"};
  std::vector<std::uint64_t> cfas{0x7000, 0x7400, 0x7500, 0x7900, 0x7a00};
  PythonThread t;
  t.frames = {code("inner", 0), shim(0x7100, 0), code("callback_user", 1), code("<module>", 1), shim(0x7600, 1)};
  t.evalCalls = 2;
  auto merged = mergeStacks(native, t, cfas);
  REQUIRE(merged);
  CHECK(order(*merged, native, t) ==
        "libc.so.6!clock_nanosleep py:inner shim python3.14+0x452c15 python3.14+0x5d5529 py:callback_user "
        "py:<module> shim python3.14+0x452c15 python3.14!Py_RunMain");
  // Without the addresses the names do not say where the calls are: nothing is guessed.
  CHECK_FALSE(mergeStacks(native, t));
}

TEST_CASE("an entry frame outside every native frame's area falls back to the names") {
  std::vector<std::string> native{"libc.so.6!read", "libpython3.12.so!_PyEval_EvalFrameDefault+0x10", "main"};
  std::vector<std::uint64_t> cfas{0x7000, 0x7400, 0x7800};
  PythonThread t;
  t.frames = {code("f", 0), shim(0x9000, 0)};  // above the outermost frame: not on this stack
  t.evalCalls = 1;
  auto merged = mergeStacks(native, t, cfas);
  REQUIRE(merged);  // by the name instead
  CHECK(order(*merged, native, t) == "libc.so.6!read py:f shim libpython3.12.so!_PyEval_EvalFrameDefault+0x10 main");
}

TEST_CASE("3.11 (no entry frames on the C stack): by name, and a count that differs is no match") {
  std::vector<std::string> native{"libc.so.6!read", "python3.11!_PyEval_EvalFrameDefault+0x8ef", "main"};
  std::vector<std::uint64_t> cfas{0x7000, 0x7400, 0x7800};
  PythonThread t;
  t.frames = {code("g", 0), code("f", 0)};
  t.evalCalls = 1;
  auto merged = mergeStacks(native, t, cfas);
  REQUIRE(merged);
  CHECK(order(*merged, native, t) == "libc.so.6!read py:g py:f python3.11!_PyEval_EvalFrameDefault+0x8ef main");
  t.evalCalls = 2;
  CHECK_FALSE(mergeStacks(native, t, cfas));
}
