// The crash's one line (crash_diagnosis.hpp).
#include "backends/crash_diagnosis.hpp"

namespace strata::backends {

namespace {

// A frame of the program's own code: a source outside the interpreter's library, site-packages
// and the system's headers and libraries.
bool ownCode(const FrameInfo& f) {
  if (!f.source || !f.source->path || f.line <= 0) return false;
  const std::string& p = *f.source->path;
  for (const char* lib : {"/lib/python3", "site-packages", "dist-packages", "/usr/include/", "/usr/lib/", "/python-build."})
    if (p.find(lib) != std::string::npos) return false;
  return p.find("/strata/_") == std::string::npos;  // the agent's own modules
}

// "memmove" of "__memmove_avx512_unaligned_erms+0x70 (libc.so.6+0x16d870)".
std::string functionOf(const std::string& frameName) {
  std::string name = frameName.substr(0, frameName.find(" ("));
  name = name.substr(0, name.find('+'));
  return name.empty() ? frameName : name;
}

}  // namespace

std::string crashDiagnosis(const std::string& signal, const std::vector<FrameInfo>& frames) {
  if (frames.empty()) return signal;
  auto where = [](const FrameInfo& f) {
    std::string file = *f.source->path;
    return file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1) + ":" + std::to_string(f.line);
  };
  // A frame with no name is its address, which a fetch from a bad address has said already.
  std::string function = functionOf(frames.front().name);
  std::string out = signal;
  if (function.rfind("0x", 0) != 0) out += " in " + function;
  if (ownCode(frames.front())) out += " at " + where(frames.front());
  for (std::size_t i = 1; i < frames.size(); ++i) {
    if (!ownCode(frames[i])) continue;
    out += ", called from " + functionOf(frames[i].name) + " at " + where(frames[i]);
    break;
  }
  return out;
}

}  // namespace strata::backends
