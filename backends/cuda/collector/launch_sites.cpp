// Launch-site capture: CPython frames through its C API found with dlsym, native frames through
// libunwind found with dlopen, deduplicated by a launch key (see launch_sites.hpp).
#include "launch_sites.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace strata::cuda::collector {

// ---- Python -----------------------------------------------------------------------------

struct PythonFrames::Api {
  int (*gilCheck)() = nullptr;
  void* (*currentThread)() = nullptr;  // the attached thread state or NULL, never fatal
  void* (*threadFrame)(void*) = nullptr;
  void* (*frameCode)(void*) = nullptr;
  int (*frameLasti)(void*) = nullptr;
  void* (*frameBack)(void*) = nullptr;
  int (*frameLine)(void*) = nullptr;
  void (*decRef)(void*) = nullptr;
  void* (*getAttr)(void*, const char*) = nullptr;
  const char* (*utf8)(void*, long*) = nullptr;
  void* (*errOccurred)() = nullptr;
  void (*errClear)() = nullptr;
  int (*isInitialized)() = nullptr;
  int (*isFinalizing)() = nullptr;  // optional
};

PythonFrames::PythonFrames() : api_(std::make_unique<Api>()) {}
PythonFrames::~PythonFrames() = default;

namespace {

template <class F>
bool find(F& out, const char* name) {
  out = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return out != nullptr;
}

std::string pyText(PythonFrames::Api& a, void* obj, const char* attr);

}  // namespace

bool PythonFrames::available() {
  std::call_once(once_, [this] {
    Api& a = *api_;
    // From 3.12 on, making a frame object cannot run the garbage collector on the spot (it
    // is scheduled for the eval loop), so walking frames inside a callback runs no Python
    // code; older interpreters are left alone.
    auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
    if (!version || *version < 0x030C0000) return;
    bool all = find(a.gilCheck, "PyGILState_Check") && find(a.threadFrame, "PyThreadState_GetFrame") &&
               find(a.frameCode, "PyFrame_GetCode") && find(a.frameLasti, "PyFrame_GetLasti") &&
               find(a.frameBack, "PyFrame_GetBack") && find(a.frameLine, "PyFrame_GetLineNumber") &&
               find(a.decRef, "Py_DecRef") && find(a.getAttr, "PyObject_GetAttrString") &&
               find(a.utf8, "PyUnicode_AsUTF8AndSize") && find(a.errOccurred, "PyErr_Occurred") &&
               find(a.errClear, "PyErr_Clear") && find(a.isInitialized, "Py_IsInitialized");
    // PyThreadState_Get is fatal without a thread state; these return NULL instead.
    all = all && (find(a.currentThread, "PyThreadState_GetUnchecked") ||
                  find(a.currentThread, "_PyThreadState_UncheckedGet") ||
                  find(a.currentThread, "PyGILState_GetThisThreadState"));
    if (!find(a.isFinalizing, "Py_IsFinalizing")) find(a.isFinalizing, "_Py_IsFinalizing");
    ok_ = all;
  });
  return ok_;
}

int PythonFrames::top(PythonKeyFrame* out, int n) {
  if (!available()) return 0;
  Api& a = *api_;
  if (!a.isInitialized() || (a.isFinalizing && a.isFinalizing())) return 0;
  // Only a thread that holds the GIL may touch frames; the GIL is never taken here (the
  // callback may run where taking it deadlocks).
  if (!a.gilCheck()) return 0;
  void* ts = a.currentThread();
  if (!ts || a.errOccurred()) return 0;
  void* frame = a.threadFrame(ts);
  int k = 0;
  while (frame && k < n) {
    void* code = a.frameCode(frame);
    out[k].code = code;
    out[k].lasti = a.frameLasti(frame);
    a.decRef(code);
    ++k;
    void* back = a.frameBack(frame);
    a.decRef(frame);
    frame = back;
  }
  if (frame) a.decRef(frame);
  if (a.errOccurred()) a.errClear();  // a frame object that could not be made: no exception leaks
  return k;
}

namespace {

std::string pyText(PythonFrames::Api& a, void* obj, const char* attr) {
  void* s = a.getAttr(obj, attr);
  if (!s) {
    a.errClear();
    return "?";
  }
  long size = 0;
  const char* text = a.utf8(s, &size);
  std::string result = text ? std::string(text, static_cast<std::size_t>(size)) : "?";
  if (!text) a.errClear();
  a.decRef(s);
  return result;
}

}  // namespace

void PythonFrames::full(std::vector<PythonFrameText>& out, std::size_t max) {
  if (!available()) return;
  Api& a = *api_;
  void* ts = a.currentThread();
  if (!ts) return;
  void* frame = a.threadFrame(ts);
  while (frame && out.size() < max) {
    void* code = a.frameCode(frame);
    PythonFrameText f;
    f.function = pyText(a, code, "co_qualname");
    f.file = pyText(a, code, "co_filename");
    f.line = a.frameLine(frame);
    a.decRef(code);
    out.push_back(std::move(f));
    void* back = a.frameBack(frame);
    a.decRef(frame);
    frame = back;
  }
  if (frame) a.decRef(frame);
  if (a.errOccurred()) a.errClear();
}

// ---- native -----------------------------------------------------------------------------

namespace {

std::string ownDirectory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&ownDirectory), &info) || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

struct SkipScan {
  const std::vector<std::string>* prefixes;
  const void* own;
  std::vector<std::pair<std::uint64_t, std::uint64_t>>* ranges;
};

int scanModule(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<SkipScan*>(data);
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  bool skip = false;
  for (const auto& p : *scan->prefixes)
    if (std::strncmp(base, p.c_str(), p.size()) == 0) skip = true;
  const auto own = reinterpret_cast<std::uint64_t>(scan->own);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> loads;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const std::uint64_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    loads.emplace_back(lo, hi);
    if (own >= lo && own < hi) skip = true;
  }
  if (skip) scan->ranges->insert(scan->ranges->end(), loads.begin(), loads.end());
  return 0;
}

std::string& mainProgramPath() {
  static std::string path = [] {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }();
  return path;
}

}  // namespace

NativeStack::NativeStack() {
  // Beside the collector first (a packed bundle carries its own copy), then the system's.
  const std::string dir = ownDirectory();
  std::vector<std::string> candidates = {"libunwind.so.8", "libunwind.so"};
  if (!dir.empty()) candidates.insert(candidates.begin(), dir + "libunwind.so.8");
  for (const std::string& candidate : candidates) {
    if (void* h = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (auto f = reinterpret_cast<Backtrace>(dlsym(h, "unw_backtrace"))) {
        backtrace_ = f;
        unwinderName_ = "libunwind";
        return;
      }
      dlclose(h);
    }
  }
  backtrace_ = &::backtrace;
  unwinderName_ = "glibc backtrace";
}

void NativeStack::skipModules(const std::vector<std::string>& prefixes, const void* own) {
  SkipScan scan{&prefixes, own, &skip_};
  dl_iterate_phdr(&scanModule, &scan);
}

bool NativeStack::skipped(std::uint64_t pc) const {
  for (const auto& [lo, hi] : skip_)
    if (pc >= lo && pc < hi) return true;
  return false;
}

__attribute__((noinline)) int NativeStack::capture(std::uint64_t* pcs, int max, int internal) {
  void* raw[160];
  const int got = backtrace_(raw, 160);
  int i = std::min(internal, got);
  while (i < got && skipped(reinterpret_cast<std::uint64_t>(raw[i]))) ++i;
  int n = 0;
  for (; i < got && n < max; ++i) pcs[n++] = reinterpret_cast<std::uint64_t>(raw[i]);
  return n;
}

void NativeStack::resolve(const std::uint64_t* pcs, int n, std::vector<NativeFrameText>& out) {
  for (int i = 0; i < n; ++i) {
    NativeFrameText f;
    f.pc = pcs[i];
    Dl_info info{};
    link_map* map = nullptr;
    // pc - 1: a return address may sit just past the end of a call's function.
    if (pcs[i] && dladdr1(reinterpret_cast<void*>(pcs[i] - 1), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP)) {
      if (map) {
        f.elfAddress = pcs[i] - map->l_addr;
        f.module = map->l_name && *map->l_name ? map->l_name : mainProgramPath();
      }
      if (info.dli_sname) f.symbol = info.dli_sname;
    }
    out.push_back(std::move(f));
  }
}

// ---- sites ------------------------------------------------------------------------------

namespace {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

constexpr int kProbe = 32;

}  // namespace

SiteTable::SiteTable(PythonFrames& python, NativeStack& native, std::size_t slots)
    : python_(python), native_(native), slots_(new Slot[slots]), mask_(slots - 1) {}

SiteTable::~SiteTable() = default;

std::uint32_t SiteTable::find(std::uint64_t key) const {
  for (int i = 0; i < kProbe; ++i) {
    const Slot& s = slots_[(key + i) & mask_];
    const std::uint64_t k = s.key.load(std::memory_order_acquire);
    if (k == key) return s.site.load(std::memory_order_relaxed);
    if (k == 0) return 0;
  }
  return 0;
}

__attribute__((noinline)) SiteTable::Lookup SiteTable::lookup(std::uint32_t cbid, std::uint16_t domain,
                                                              std::string_view api, CapturedSite& captured) {
  PythonKeyFrame py[4];
  const int np = python_.top(py, 4);
  std::uint64_t pcs[64];
  int nn = 0;
  std::uint64_t key = mix(0x5354524154414755ull, (std::uint64_t{domain} << 32) | cbid);
  if (np > 0) {
    for (int i = 0; i < np; ++i) key = mix(mix(key, reinterpret_cast<std::uintptr_t>(py[i].code)), static_cast<std::uint64_t>(py[i].lasti));
  } else {
    nn = native_.capture(pcs, 64, 2);
    for (int i = 0; i < std::min(nn, 16); ++i) key = mix(key, pcs[i]);
  }
  if (key == 0) key = 1;
  if (std::uint32_t s = find(key)) return {s, false};

  captured = CapturedSite{};
  captured.cbid = cbid;
  captured.domain = domain;
  captured.api = std::string(api);
  if (np > 0) {
    python_.full(captured.python, 128);
    nn = native_.capture(pcs, 64, 2);
  }
  NativeStack::resolve(pcs, nn, captured.native);

  std::lock_guard<std::mutex> lock(insert_);
  if (std::uint32_t s = find(key)) return {s, false};  // another thread got there first
  for (int i = 0; i < kProbe; ++i) {
    Slot& s = slots_[(key + i) & mask_];
    if (s.key.load(std::memory_order_relaxed) != 0) continue;
    captured.id = ++next_;
    s.site.store(captured.id, std::memory_order_relaxed);
    s.key.store(key, std::memory_order_release);
    return {captured.id, true};
  }
  overflowed_.fetch_add(1, std::memory_order_relaxed);
  return {0, false};
}

}  // namespace strata::cuda::collector
