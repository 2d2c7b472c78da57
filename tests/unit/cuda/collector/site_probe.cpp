// A module the Python test loads with ctypes: runs the collector's launch-site capture (the
// key read from the calling thread's own frames, then the names read later) from inside
// CPython, as the CUPTI launch callback would, from the calling thread (with or without the
// GIL, as ctypes' PyDLL or CDLL leave it) or from a thread of its own that has no Python frame,
// and describes what it got.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "launch_sites.hpp"

using namespace strata::cuda::collector;
using strata::cuda::SiteAttribution;

namespace {

struct Probe {
  PythonFrames python;
  NativeStack native;
  Scopes scopes;
  SiteTable table{python, native, scopes};
  Probe() { native.skipModules({}, reinterpret_cast<const void*>(&strata_probe_marker)); }
  static void strata_probe_marker() {}
};

Probe& probe() {
  static Probe* p = new Probe();
  return *p;
}

// "site=N fresh=0|1 attribution=A caller=TID python=func@file:line:evalcall|... native=COUNT";
// the frames only for a new site (named here, as the collector's drain names them).
std::string launchHere() {
  Probe& p = probe();
  SiteTable::Lookup r = p.table.lookup(211, 2, "cudaLaunchKernel");
  std::string text = "site=" + std::to_string(r.site) + " fresh=" + (r.fresh ? "1" : "0") +
                     " attribution=" + std::string(siteAttributionName(r.attribution));
  std::vector<RawSite*> raw;
  p.table.takePending(raw);
  for (const RawSite* s : raw) {
    if (s->id != r.site) continue;
    const CapturedSite named = nameSite(*s, p.python);
    text += " caller=" + std::to_string(named.callerTid) + " python=";
    for (const auto& f : named.python)
      text += f.function + "@" + f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.evalCall) + "|";
    text += " native=" + std::to_string(named.native.size());
  }
  p.table.release(raw);
  return text;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int strata_probe_launch(char* out, int size) {
  return std::snprintf(out, static_cast<size_t>(size), "%s", launchHere().c_str());
}

// The same from a thread of its own, started and joined here: no Python frame, no thread state.
extern "C" __attribute__((visibility("default"))) int strata_probe_launch_from_thread(char* out, int size) {
  std::string text;
  pthread_t t;
  pthread_create(
      &t, nullptr,
      [](void* arg) -> void* {
        *static_cast<std::string*>(arg) = launchHere();
        return nullptr;
      },
      &text);
  pthread_join(t, nullptr);
  return std::snprintf(out, static_cast<size_t>(size), "%s", text.c_str());
}

extern "C" __attribute__((visibility("default"))) int strata_probe_scope_enter(int kind, int skip) {
  return probe().scopes.enter(probe().python, kind, skip);
}

extern "C" __attribute__((visibility("default"))) void strata_probe_scope_leave(int slot) { probe().scopes.leave(slot); }

extern "C" __attribute__((visibility("default"))) int strata_probe_describe(char* out, int size) {
  return std::snprintf(out, static_cast<size_t>(size), "%s", probe().python.describe().c_str());
}

extern "C" __attribute__((visibility("default"))) int strata_probe_tid() { return static_cast<int>(syscall(SYS_gettid)); }
