// Launch sites: keys from the launching thread's Python frames (or the scope it runs for) and
// its first native return addresses; new keys copied raw into slots taken in advance (see
// launch_sites.hpp).
#include "launch_sites.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace strata::cuda::collector {

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
    if (own && own >= lo && own < hi) skip = true;
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

bool within(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges, std::uint64_t pc) {
  for (const auto& [lo, hi] : ranges)
    if (pc >= lo && pc < hi) return true;
  return false;
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

void NativeStack::keyModules(const std::vector<std::string>& prefixes) {
  SkipScan scan{&prefixes, nullptr, &keySkip_};
  dl_iterate_phdr(&scanModule, &scan);
}

bool NativeStack::skipped(std::uint64_t pc) const { return within(skip_, pc); }
bool NativeStack::keySkipped(std::uint64_t pc) const { return within(skip_, pc) || within(keySkip_, pc); }

__attribute__((noinline)) int NativeStack::capture(std::uint64_t* pcs, int max, int internal) {
  void* raw[160];
  const int got = backtrace_(raw, 160);
  int i = std::min(internal, got);
  while (i < got && skipped(reinterpret_cast<std::uint64_t>(raw[i]))) ++i;
  int n = 0;
  for (; i < got && n < max; ++i) pcs[n++] = reinterpret_cast<std::uint64_t>(raw[i]);
  return n;
}

__attribute__((noinline)) int NativeStack::captureKey(std::uint64_t* pcs, int max, int internal) {
  void* raw[kKeyDepth];
  const int got = backtrace_(raw, kKeyDepth);
  int i = std::min(internal, got);
  while (i < got && keySkipped(reinterpret_cast<std::uint64_t>(raw[i]))) ++i;
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

CapturedSite nameSite(const RawSite& r, PythonFrames& python) {
  CapturedSite c{.id = r.id, .cbid = r.cbid, .domain = r.domain, .api = r.api, .attribution = r.attribution,
                 .callerTid = r.callerTid, .waitKind = r.waitKind};
  python.resolve(r.python, r.pythonCount, c.python);
  NativeStack::resolve(r.native, r.nativeCount, c.native);
  return c;
}

// ---- keys -------------------------------------------------------------------------------

namespace {

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

std::uint64_t pythonKey(std::uint64_t h, const RawPythonFrame* frames, int n) {
  for (int i = 0; i < n; ++i) h = mix(mix(h, frames[i].code), static_cast<std::uint64_t>(frames[i].lasti));
  return h;
}

constexpr int kProbe = 32;
constexpr int kKeyFrames = 4;        // Python frames in a key
constexpr int kNativeKeyFrames = 8;  // native return addresses in a key without Python frames

}  // namespace

// ---- scopes -----------------------------------------------------------------------------

int Scopes::enter(PythonFrames& python, int kind, int skip) {
  RawPythonFrame frames[kFrames];
  const int n = python.top(frames, kFrames, skip);
  if (n <= 0) return -1;
  const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  std::lock_guard<std::mutex> lock(mutex_);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots_[i];
    if (s.tid.load(std::memory_order_relaxed) != 0) continue;
    s.seq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
    std::atomic_thread_fence(std::memory_order_release);
    s.kind = static_cast<std::uint8_t>(kind);
    s.count = n;
    std::memcpy(s.frames, frames, sizeof(RawPythonFrame) * static_cast<std::size_t>(n));
    s.key.store(pythonKey(mix(0x53434f5045ull, static_cast<std::uint64_t>(kind)), frames, std::min(n, kKeyFrames)),
                std::memory_order_relaxed);
    s.tid.store(tid, std::memory_order_relaxed);
    s.order.store(++entered_, std::memory_order_relaxed);
    s.seq.fetch_add(1, std::memory_order_release);  // even again
    current_.store(i, std::memory_order_release);
    return i;
  }
  return -1;
}

void Scopes::leave(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& s = slots_[slot];
  s.seq.fetch_add(1, std::memory_order_acq_rel);
  s.tid.store(0, std::memory_order_relaxed);
  s.order.store(0, std::memory_order_relaxed);
  s.seq.fetch_add(1, std::memory_order_release);
  pickCurrent();
}

void Scopes::pickCurrent() {
  int best = -1;
  std::uint64_t newest = 0;
  for (int i = 0; i < kSlots; ++i) {
    const std::uint64_t o = slots_[i].order.load(std::memory_order_relaxed);
    if (slots_[i].tid.load(std::memory_order_relaxed) && o > newest) newest = o, best = i;
  }
  current_.store(best, std::memory_order_release);
}

bool Scopes::current(View& view) const {
  const int i = current_.load(std::memory_order_acquire);
  if (i < 0) return false;
  const Slot& s = slots_[i];
  const std::uint32_t before = s.seq.load(std::memory_order_acquire);
  if (before & 1) return false;
  view.slot = i;
  view.key = s.key.load(std::memory_order_relaxed);
  view.tid = s.tid.load(std::memory_order_relaxed);
  view.kind = s.kind;
  std::atomic_thread_fence(std::memory_order_acquire);
  view.seq = s.seq.load(std::memory_order_relaxed);
  return view.seq == before && view.tid != 0;
}

int Scopes::frames(const View& view, RawPythonFrame* out, int max) const {
  if (view.slot < 0) return 0;
  const Slot& s = slots_[view.slot];
  if (s.seq.load(std::memory_order_acquire) != view.seq) return 0;
  const int n = std::min(s.count, max);
  // Copied word by word: the slot may be rewritten meanwhile, which the sequence check sees.
  for (int i = 0; i < n; ++i) {
    auto* word = reinterpret_cast<const std::uint64_t*>(&s.frames[i]);
    std::uint64_t copy[2] = {std::atomic_ref<const std::uint64_t>(word[0]).load(std::memory_order_relaxed),
                             std::atomic_ref<const std::uint64_t>(word[1]).load(std::memory_order_relaxed)};
    std::memcpy(&out[i], copy, sizeof copy);
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  return s.seq.load(std::memory_order_relaxed) == view.seq ? n : 0;
}

int Scopes::active() const {
  int n = 0;
  for (const Slot& s : slots_) n += s.tid.load(std::memory_order_relaxed) != 0;
  return n;
}

// ---- sites ------------------------------------------------------------------------------

static_assert(sizeof(RawPythonFrame) == 16, "Scopes::frames copies a frame as two words");

SiteTable::SiteTable(PythonFrames& python, NativeStack& native, Scopes& scopes, std::size_t slots, std::size_t pending)
    : python_(python), native_(native), scopes_(scopes), slots_(new Slot[slots]), mask_(slots - 1), pool_(pending) {
  for (RawSite& s : pool_) free_.push_back(&s);
}

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

__attribute__((noinline)) SiteTable::Lookup SiteTable::lookup(std::uint32_t cbid, std::uint16_t domain, const char* api,
                                                              std::uint64_t launched) {
  Lookup out;
  RawPythonFrame py[kKeyFrames];
  const int np = python_.top(py, kKeyFrames);
  Scopes::View scope;
  std::uint64_t key = mix(mix(0x5354524154414755ull, (std::uint64_t{domain} << 32) | cbid), launched);
  if (np > 0) {
    // The Python line and what it launches tell launches apart: no unwinding at all.
    out.attribution = SiteAttribution::Own;
    key = pythonKey(key, py, np);
  } else if (scopes_.current(scope)) {
    out.attribution = SiteAttribution::Caller;
    key = mix(mix(key, scope.key), scope.tid);
  } else {
    // No Python: where the program called from (a runtime linked into the program lies
    // between the call and CUDA's modules, hence eight addresses).
    std::uint64_t pcs[kNativeKeyFrames];
    const int nn = native_.captureKey(pcs, kNativeKeyFrames, 2);
    for (int i = 0; i < nn; ++i) key = mix(key, pcs[i]);
  }
  if (key == 0) key = 1;
  if (std::uint32_t s = find(key)) {
    out.site = s;
    return out;
  }

  std::lock_guard<std::mutex> lock(insert_);
  if (std::uint32_t s = find(key)) {  // another thread got there first
    out.site = s;
    return out;
  }
  if (free_.empty()) {
    out.noSlot = true;
    return out;
  }
  int probe = 0;
  Slot* slot = nullptr;
  for (; probe < kProbe; ++probe) {
    Slot& s = slots_[(key + probe) & mask_];
    if (s.key.load(std::memory_order_relaxed) == 0) {
      slot = &s;
      break;
    }
  }
  if (!slot) {
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  RawSite* raw = free_.back();
  free_.pop_back();
  raw->id = ++next_;
  raw->cbid = cbid;
  raw->domain = domain;
  raw->api = api ? api : "";
  raw->attribution = out.attribution;
  raw->callerTid = 0;
  raw->waitKind = 0;
  raw->pythonCount = 0;
  if (out.attribution == SiteAttribution::Own) {
    raw->pythonCount = static_cast<std::uint16_t>(python_.top(raw->python, kSitePythonFrames));
  } else if (out.attribution == SiteAttribution::Caller) {
    raw->pythonCount = static_cast<std::uint16_t>(scopes_.frames(scope, raw->python, kSitePythonFrames));
    raw->callerTid = scope.tid;
    raw->waitKind = scope.kind;
    if (!raw->pythonCount) raw->attribution = SiteAttribution::None;  // the scope closed meanwhile
  }
  raw->nativeCount = static_cast<std::uint16_t>(native_.capture(raw->native, kSiteNativeFrames, 2));
  pending_.push_back(raw);
  slot->site.store(raw->id, std::memory_order_relaxed);
  slot->key.store(key, std::memory_order_release);
  out.site = raw->id;
  out.fresh = true;
  out.attribution = raw->attribution;
  return out;
}

void SiteTable::takePending(std::vector<RawSite*>& out) {
  std::lock_guard<std::mutex> lock(insert_);
  out.insert(out.end(), pending_.begin(), pending_.end());
  pending_.clear();
}

void SiteTable::release(const std::vector<RawSite*>& taken) {
  std::lock_guard<std::mutex> lock(insert_);
  free_.insert(free_.end(), taken.begin(), taken.end());
}

std::size_t SiteTable::pendingCount() {
  std::lock_guard<std::mutex> lock(insert_);
  return pending_.size();
}

}  // namespace strata::cuda::collector
