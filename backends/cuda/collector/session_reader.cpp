// SessionReader: every ring of one session in one directory, their ids mapped to the session's
// (see reader.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include "strata/cuda/collector/reader.hpp"

namespace strata::cuda {
namespace {

using namespace ring;

bool isRingName(std::string_view name) {
  std::string_view prefix = kFilePrefix, suffix = kFileSuffix;
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return false;
  std::string_view mid = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  bool dash = false;
  for (std::size_t i = 0; i < mid.size(); ++i) {
    if (mid[i] == '-' && i > 0 && !dash && i + 1 < mid.size()) dash = true;
    else if (mid[i] < '0' || mid[i] > '9') return false;
  }
  return true;
}

}  // namespace

// ---- SessionReader ----------------------------------------------------------------------

struct SessionReader::Ring {
  std::unique_ptr<RingReader> reader;
  std::vector<std::uint32_t> strings;  // producer string id -> session id
  std::vector<std::uint32_t> sites;    // producer site id -> session id
  std::string problem;
  bool finished = false;  // producer gone and everything read
};

// Maps one ring's ids to the session's while its messages are handed over.
class SessionSink final : public RingSink {
 public:
  SessionSink(SessionReader& s, SessionReader::Ring& r, Batch& out) : s_(s), r_(r), out_(out) {}

  std::uint32_t str(std::uint32_t local) const {
    return local < r_.strings.size() ? r_.strings[local] : 0;
  }
  std::string_view text(std::uint32_t local) const { return s_.strings_[str(local)]; }

  void onRecord(const GpuRecord& record) override {
    GpuRecord rec = record;
    rec.name = str(rec.name);
    rec.site = rec.site < r_.sites.size() ? r_.sites[rec.site] : 0;
    if (rec.pid == 0) rec.pid = r_.reader->pid();
    out_.records.push_back(rec);
  }
  void onString(std::uint32_t id, std::string_view t) override {
    if (id > (1u << 24)) return;  // more strings than any process makes: ignored, not grown
    if (r_.strings.size() <= id) r_.strings.resize(id + 1, 0);
    auto it = s_.stringIds_.find(std::string(t));
    if (it != s_.stringIds_.end()) {
      r_.strings[id] = it->second;
      return;
    }
    const auto global = static_cast<std::uint32_t>(s_.strings_.size());
    s_.strings_.emplace_back(t);
    s_.stringIds_.emplace(std::string(t), global);
    r_.strings[id] = global;
    out_.strings.push_back({global, std::string(t)});
  }
  void onSite(const ring::SiteMessage& m, std::span<const ring::PythonFrameWire> python,
              std::span<const ring::NativeFrameWire> native) override {
    if (m.id > (1u << 24)) return;
    LaunchSite site;
    site.id = static_cast<std::uint32_t>(s_.sites_.size());
    site.pid = r_.reader->pid();
    site.api = text(m.api);
    if (m.attribution <= static_cast<std::uint8_t>(SiteAttribution::None))
      site.attribution = static_cast<SiteAttribution>(m.attribution);
    if (site.attribution == SiteAttribution::Caller) {
      site.callerTid = m.callerTid;
      site.waitedIn = m.waitKind == 1 ? "backward" : "a call";
    }
    for (const auto& f : python)
      site.python.push_back({std::string(text(f.function)), std::string(text(f.file)), f.line,
                             static_cast<int>(std::min<std::uint32_t>(f.evalCall, 1u << 20))});
    for (const auto& f : native) {
      site.native.push_back(f.pc);
      site.nativeFrames.push_back({f.pc, f.elfAddress, std::string(text(f.module)), std::string(text(f.symbol))});
    }
    if (r_.sites.size() <= m.id) r_.sites.resize(m.id + 1, 0);
    r_.sites[m.id] = site.id;
    s_.sites_.push_back(site);
    out_.sites.push_back(std::move(site));
  }
  void onCudaError(const ring::CudaErrorMessage& m, std::span<const ring::CallerWire> callers) override {
    CudaErrorEvent e;
    e.pid = r_.reader->pid();
    e.tid = m.tid;
    e.result = m.result;
    e.domain = m.domain;
    e.cbid = m.cbid;
    e.api = text(m.api);
    e.error = text(m.error);
    e.lastKernel = text(m.lastKernel);
    e.lastCorrelation = m.lastCorrelation;
    e.lastSite = m.lastSite < r_.sites.size() ? r_.sites[m.lastSite] : 0;
    e.time = m.time;
    e.callerPc = m.callerPc;
    e.callerModule = text(m.callerModule);
    e.callerElfAddress = m.callerElfAddress;
    for (const ring::CallerWire& c : callers) {
      NativeFrame f;
      f.pc = c.pc;
      f.elfAddress = c.elfAddress;
      f.module = text(c.module);
      e.callers.push_back(std::move(f));
    }
    out_.errors.push_back(std::move(e));
  }
  void onKernelMetrics(const ring::KernelMetricsMessage& m) override {
    // NaN on the wire: not measured.
    auto value = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
    out_.metrics.push_back({.metrics = {.pid = r_.reader->pid(), .correlation = m.correlation, .device = m.device,
                                        .request = m.request, .kernel = std::string(text(m.kernel)), .timeNs = m.time,
                                        .passes = m.passes, .smThroughputPct = value(m.smThroughputPct),
                                        .dramThroughputPct = value(m.dramThroughputPct),
                                        .achievedOccupancyPct = value(m.achievedOccupancyPct),
                                        .durationNs = value(m.durationNs), .error = std::string(text(m.error)),
                                        .result = m.result},
                            .remaining = m.remaining});
  }
  void onGraphNode(const ring::GraphNodeMessage& m) override {
    GraphNodeSite g;
    g.pid = r_.reader->pid();
    g.node = m.node;
    g.site = m.site < r_.sites.size() ? r_.sites[m.site] : 0;
    switch (static_cast<ring::GraphNodeOrigin>(m.origin)) {
      case ring::GraphNodeOrigin::Captured: g.origin = "captured"; break;
      case ring::GraphNodeOrigin::Added: g.origin = "added"; break;
      case ring::GraphNodeOrigin::Cloned: g.origin = "cloned"; break;
      default: g.origin = "unknown"; break;
    }
    if (g.site) out_.graphNodes.push_back(std::move(g));
  }
  void onDevice(const ring::DeviceMessage& m) override {
    DeviceProperties d;
    d.device = m.device;
    d.name = text(m.name);
    d.computeMajor = m.computeMajor;
    d.computeMinor = m.computeMinor;
    d.smCount = m.smCount;
    d.maxThreadsPerBlock = m.maxThreadsPerBlock;
    d.maxThreadsPerMultiprocessor = m.maxThreadsPerMultiprocessor;
    d.maxBlocksPerMultiprocessor = m.maxBlocksPerMultiprocessor;
    d.regsPerBlock = m.regsPerBlock;
    d.regsPerMultiprocessor = m.regsPerMultiprocessor;
    d.warpSize = m.warpSize;
    d.sharedMemPerBlock = m.sharedMemPerBlock;
    d.sharedMemPerMultiprocessor = m.sharedMemPerMultiprocessor;
    d.sharedMemPerBlockOptin = m.sharedMemPerBlockOptin;
    d.reservedSharedMemPerBlock = m.reservedSharedMemPerBlock;
    d.totalGlobalMem = m.totalGlobalMem;
    d.source = "collector (process " + std::to_string(r_.reader->pid()) + ")";
    out_.devices.push_back(std::move(d));
  }
  void onObjectName(const ring::ObjectNameMessage& m) override {
    ObjectName n;
    n.pid = r_.reader->pid();
    n.objectKind = m.objectKind;
    std::copy(std::begin(m.ids), std::end(m.ids), n.ids);
    n.name = text(m.name);
    out_.names.push_back(std::move(n));
  }

 private:
  SessionReader& s_;
  SessionReader::Ring& r_;
  Batch& out_;
};

SessionReader::SessionReader(std::string dir, std::string session) : dir_(std::move(dir)), session_(std::move(session)) {
  strings_.emplace_back();
  sites_.emplace_back();
}

SessionReader::~SessionReader() = default;

Result<void> SessionReader::poll(Batch& out, std::size_t maxRecords) {
  DIR* d = opendir(dir_.c_str());
  if (!d) return errnoError(errors::kGpuRing, "read GPU ring directory " + dir_);
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (isRingName(e->d_name)) names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    if (rings_.count(name) || rejected_.count(name)) continue;
    auto opened = RingReader::open(dir_ + "/" + name);
    if (!opened) {
      if (opened.error().id != RingReader::kNotReady) rejected_[name] = opened.error().message;
      continue;
    }
    if (!session_.empty() && (*opened)->session() != session_) {
      rejected_[name] = "belongs to session '" + (*opened)->session() + "'";
      continue;
    }
    auto ring = std::make_unique<Ring>();
    ring->reader = std::move(*opened);
    if (profileCount_) ring->reader->requestProfile(profileKernel_, profileCount_);
    rings_.emplace(name, std::move(ring));
  }
  std::size_t budget = maxRecords;
  for (auto& [name, ring] : rings_) {
    if (ring->finished || !ring->problem.empty()) continue;
    // Liveness first: a producer gone before this drain has written all it ever will.
    const bool alive = ring->reader->producerAlive();
    SessionSink sink(*this, *ring, out);
    auto got = ring->reader->drain(sink, budget);
    if (!got) {
      ring->problem = got.error().message;
      continue;
    }
    budget -= std::min(budget, *got);
    if (!alive && ring->reader->pending() == 0) ring->finished = true;
  }
  return {};
}

std::vector<CollectorStatus> SessionReader::processes() const {
  std::vector<CollectorStatus> all;
  for (const auto& [name, ring] : rings_) {
    all.push_back(ring->reader->status());
    if (!ring->problem.empty()) all.back().problem = ring->problem;
  }
  return all;
}

std::uint64_t SessionReader::droppedRecords() const {
  std::uint64_t n = 0;
  for (const auto& [name, ring] : rings_) n += ring->reader->status().droppedRecords;
  return n;
}

namespace {

// Stopped by a debugger (ptrace all-stop, or SIGSTOP): its flush thread cannot answer, so it is
// not asked and not waited for; what it flushed before is in its ring.
bool processStopped(std::uint32_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%u/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* close = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
  return close && close[1] == ' ' && (close[2] == 't' || close[2] == 'T');
}

}  // namespace

std::size_t SessionReader::requestFlush() {
  flushAsked_.clear();
  for (auto& [name, ring] : rings_)
    if (!ring->finished && ring->reader->producerAlive() && !processStopped(ring->reader->pid())) {
      auto state = ring->reader->status().state;
      if (state == State::Collecting) flushAsked_.emplace_back(ring->reader.get(), ring->reader->requestFlush());
    }
  return flushAsked_.size();
}

bool SessionReader::flushServed() const {
  for (const auto& [reader, request] : flushAsked_)
    // A producer that died since cannot answer; what it flushed is in its ring.
    if (!reader->flushServed(request) && reader->producerAlive()) return false;
  return true;
}

bool SessionReader::flush(std::chrono::milliseconds timeout) {
  requestFlush();
  const auto asked = flushAsked_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool all = true;
  for (auto& [reader, request] : asked) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (!reader->waitFlushed(request, std::max(left, std::chrono::milliseconds(0)))) all = false;
  }
  return all;
}

std::size_t SessionReader::requestProfile(std::string_view kernel, std::uint32_t count) {
  profileKernel_ = std::string(kernel);
  profileCount_ = count;
  std::size_t n = 0;
  for (auto& [name, ring] : rings_)
    if (!ring->finished && ring->problem.empty() && ring->reader->producerAlive()) {
      ring->reader->requestProfile(kernel, count);
      ++n;
    }
  return n;
}

std::string_view SessionReader::string(std::uint32_t id) const {
  return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
}

const LaunchSite* SessionReader::site(std::uint32_t id) const {
  return id > 0 && id < sites_.size() ? &sites_[id] : nullptr;
}

}  // namespace strata::cuda
