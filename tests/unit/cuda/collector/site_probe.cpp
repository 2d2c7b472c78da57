// A module the Python test loads with ctypes: runs the collector's launch-site capture from
// inside CPython, as the CUPTI launch callback would, and describes what it got.
#include <cstdio>
#include <string>

#include "launch_sites.hpp"

using namespace strata::cuda::collector;

namespace {
SiteTable& table() {
  static PythonFrames* python = new PythonFrames();
  static NativeStack* native = [] {
    auto* n = new NativeStack();
    // Like the collector skips itself: the probe's own frames are not the program's.
    n->skipModules({}, reinterpret_cast<const void*>(&table));
    return n;
  }();
  static SiteTable* t = new SiteTable(*python, *native);
  return *t;
}
}  // namespace

// "site=N fresh=0|1 python=func@file:line|... native=COUNT", or "site=N fresh=0" for a known key.
extern "C" __attribute__((visibility("default"))) int strata_probe_launch(char* out, int size) {
  CapturedSite captured;
  auto r = table().lookup(211, 2, "cudaLaunchKernel", captured);
  std::string text = "site=" + std::to_string(r.site) + " fresh=" + (r.fresh ? "1" : "0");
  if (r.fresh) {
    text += " python=";
    for (const auto& f : captured.python) text += f.function + "@" + f.file + ":" + std::to_string(f.line) + "|";
    text += " native=" + std::to_string(captured.native.size());
  }
  return std::snprintf(out, static_cast<size_t>(size), "%s", text.c_str());
}
