// Line numbers from CPython's line tables, and Python frames spliced into a native stack.
#include <algorithm>
#include <map>
#include <string_view>

#include "strata/python/remote/py_remote.hpp"

namespace strata::python::remote {

namespace {

// The signed varint of the 3.11+ location table: 6 bits a byte, bit 6 says more follow.
int signedVarint(const std::string& t, std::size_t i) {
  unsigned value = 0, shift = 0;
  while (i < t.size()) {
    auto b = static_cast<unsigned char>(t[i++]);
    value |= (b & 63u) << shift;
    shift += 6;
    if (!(b & 64) || shift > 30) break;
  }
  return (value & 1) ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
}

}  // namespace

int lineFromLocationTable(const std::string& t, int firstLine, std::uint64_t lasti) {
  int line = firstLine;
  std::uint64_t address = 0;
  for (std::size_t i = 0; i < t.size();) {
    auto b = static_cast<unsigned char>(t[i]);
    unsigned code = (b >> 3) & 15;
    std::uint64_t length = (b & 7u) + 1;
    int delta = 0;
    if (code == 13 || code == 14) delta = signedVarint(t, i + 1);
    else if (code >= 10 && code <= 12) delta = static_cast<int>(code) - 10;
    line += delta;
    if (lasti >= address && lasti < address + length) return code == 15 ? 0 : line;
    address += length;
    // Each entry starts with bit 7 set; its operands never do.
    do ++i;
    while (i < t.size() && !(static_cast<unsigned char>(t[i]) & 128));
  }
  return 0;
}

int lineFromLineTable310(const std::string& t, int firstLine, std::uint64_t lasti) {
  std::uint64_t addressBytes = lasti * 2, start = 0, end = 0;
  int line = firstLine;
  for (std::size_t i = 0; i + 1 < t.size(); i += 2) {
    auto startDelta = static_cast<unsigned char>(t[i]);
    auto lineDelta = static_cast<signed char>(t[i + 1]);
    start = end;
    end = start + startDelta;
    bool noLine = lineDelta == -128;
    if (!noLine) line += lineDelta;
    if (addressBytes >= start && addressBytes < end) return noLine ? 0 : line;
  }
  return 0;
}

bool isEvalFrameFunction(const std::string& nativeFunction) {
  // Names from the symbol table alone come as "python3.11!_PyEval_EvalFrameDefault+0x8ef".
  std::string_view name(nativeFunction);
  if (auto bang = name.find('!'); bang != std::string_view::npos) name.remove_prefix(bang + 1);
  return name.starts_with("_PyEval_EvalFrameDefault");
}

namespace {

// 3.12+: each _PyEval_EvalFrameDefault call keeps its entry frame (the shim ending its run of
// Python frames) among its own locals, so the native frame whose stack area [callee's CFA,
// own CFA) holds the shim's address is that call: exact with no symbol at all (a stripped
// interpreter, an eval loop split into hot and cold parts). Empty when any run has no shim or
// any shim falls outside the native frames, or the calls come out of order.
std::optional<std::vector<std::size_t>> evalCallsByAddress(const std::vector<std::uint64_t>& cfas,
                                                           const PythonThread& thread) {
  std::map<std::size_t, std::uint64_t> shimOf;  // eval call -> its entry frame's address
  std::size_t runs = 0;
  for (const PythonFrame& f : thread.frames) {
    runs = std::max(runs, f.evalIndex + 1);
    if (f.isShim && f.frameAddr) shimOf[f.evalIndex] = f.frameAddr;
  }
  if (runs == 0 || shimOf.size() != runs) return std::nullopt;
  std::vector<std::size_t> at;
  std::size_t n = 0;
  for (std::size_t call = 0; call < runs; ++call) {
    std::uint64_t addr = shimOf[call];
    while (n < cfas.size() && (cfas[n] == 0 || addr >= cfas[n])) ++n;
    if (n >= cfas.size()) return std::nullopt;
    if (n > 0 && addr < cfas[n - 1]) return std::nullopt;  // below this frame's area: not on this stack
    at.push_back(n++);
  }
  return at;
}

}  // namespace

std::optional<std::vector<MergedFrame>> mergeStacks(const std::vector<std::string>& nativeFunctions,
                                                    const PythonThread& thread, const std::vector<std::uint64_t>& cfas) {
  std::optional<std::vector<std::size_t>> calls;  // the native index of each eval call, innermost first
  if (cfas.size() == nativeFunctions.size()) calls = evalCallsByAddress(cfas, thread);
  if (!calls) {
    calls.emplace();
    for (std::size_t i = 0; i < nativeFunctions.size(); ++i)
      if (isEvalFrameFunction(nativeFunctions[i])) calls->push_back(i);
    if (calls->size() != thread.evalCalls) return std::nullopt;
  }
  // Each call's Python frames go right before the native frame running it.
  std::vector<MergedFrame> out;
  std::size_t call = 0, py = 0;
  for (std::size_t i = 0; i < nativeFunctions.size(); ++i) {
    if (call < calls->size() && (*calls)[call] == i) {
      while (py < thread.frames.size() && thread.frames[py].evalIndex == call) out.push_back({true, py++});
      ++call;
    }
    out.push_back({false, i});
  }
  while (py < thread.frames.size()) out.push_back({true, py++});
  return out;
}

}  // namespace strata::python::remote
