// The adapter's reader of collector rings (see reader.hpp and the README's format section).
#include "strata/cuda/collector/reader.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include "strata/cuda/collector/futex.hpp"

namespace strata::cuda {
namespace {

using namespace ring;

template <class T>
std::atomic_ref<T> at(T& field) {
  return std::atomic_ref<T>(field);
}

std::uint64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

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

void Batch::clear() {
  records.clear();
  strings.clear();
  sites.clear();
  errors.clear();
  names.clear();
  metrics.clear();
  graphNodes.clear();
  devices.clear();
}

bool Batch::empty() const {
  return records.empty() && strings.empty() && sites.empty() && errors.empty() && names.empty() && metrics.empty() &&
         graphNodes.empty() && devices.empty();
}

// ---- RingReader -------------------------------------------------------------------------

Result<std::unique_ptr<RingReader>> RingReader::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kGpuRing, "open " + path);
  auto fail = [&](std::string why, ErrorId id = errors::kGpuRing) -> Result<std::unique_ptr<RingReader>> {
    close(fd);
    return Error{id, path + ": " + why, true};
  };
  struct stat st{};
  if (fstat(fd, &st) != 0) return fail(std::string("fstat: ") + std::strerror(errno));
  if (static_cast<std::size_t>(st.st_size) < kHeaderSize) return fail("not ready: shorter than a ring header", kNotReady);
  void* h = mmap(nullptr, kHeaderSize, PROT_READ, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  Header copy;
  std::memcpy(&copy, h, sizeof copy);
  munmap(h, kHeaderSize);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (std::memcmp(copy.magic, kMagic, sizeof kMagic) != 0) {
    bool zero = std::all_of(copy.magic, copy.magic + 8, [](char c) { return c == 0; });
    return zero ? fail("not ready: the collector is still making it", kNotReady) : fail("not a Strata GPU ring");
  }
  if (copy.formatVersion != kFormatVersion)
    return fail("ring format " + std::to_string(copy.formatVersion) + ", this reader reads format " +
                std::to_string(kFormatVersion));
  const std::uint64_t cap = copy.capacity;
  if (copy.headerSize != kHeaderSize || copy.recordSize != sizeof(GpuRecord) || cap < kMinCapacity ||
      (cap & (cap - 1)) != 0 || cap > (std::uint64_t{1} << 30) ||
      static_cast<std::uint64_t>(st.st_size) < kHeaderSize + cap)
    return fail("header does not describe a valid ring (capacity " + std::to_string(cap) + ", file " +
                std::to_string(st.st_size) + " bytes)");
  const std::size_t mapped = kHeaderSize + cap;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail(std::string("mmap: ") + std::strerror(errno));
  std::unique_ptr<RingReader> r(new RingReader);
  r->header_ = static_cast<Header*>(p);
  r->data_ = static_cast<const std::uint8_t*>(p) + kHeaderSize;
  r->mapped_ = mapped;
  r->capacity_ = cap;
  r->fd_ = fd;
  r->path_ = path;
  return r;
}

RingReader::~RingReader() {
  if (header_) munmap(header_, mapped_);
  if (fd_ >= 0) close(fd_);
}

std::uint32_t RingReader::pid() const { return header_->pid; }

std::string RingReader::session() const {
  return std::string(header_->session, strnlen(header_->session, kSessionSize));
}

std::uint64_t RingReader::pending() const {
  return at(header_->writePos).load(std::memory_order_acquire) - at(header_->readPos).load(std::memory_order_relaxed);
}

Result<std::size_t> RingReader::drain(RingSink& sink, std::size_t maxRecords) {
  if (!corrupt_.empty()) return Error{errors::kGpuRing, corrupt_, true};
  std::uint64_t read = at(header_->readPos).load(std::memory_order_relaxed);
  const std::uint64_t write = at(header_->writePos).load(std::memory_order_acquire);
  auto corrupt = [&](std::uint64_t pos, const std::string& why) -> Result<std::size_t> {
    corrupt_ = "GPU ring " + path_ + " is corrupt at byte " + std::to_string(pos) + ": " + why +
               "; no more records are read from it";
    return Error{errors::kGpuRing, corrupt_, true};
  };
  if (write - read > capacity_ || write < read)
    return corrupt(read, "write position " + std::to_string(write) + " is not within capacity of read position");
  std::size_t records = 0;
  while (read < write && records < maxRecords) {
    const std::size_t offset = read & (capacity_ - 1);
    const std::size_t toEnd = capacity_ - offset;
    if (write - read < sizeof(MessageHeader)) return corrupt(read, "a message header runs past the written data");
    MessageHeader h;
    std::memcpy(&h, data_ + offset, sizeof h);
    if (h.length < sizeof h || h.length % kAlign != 0 || h.length > toEnd || h.length > write - read)
      return corrupt(read, "message length " + std::to_string(h.length) + " does not fit");
    const auto type = static_cast<MessageType>(h.type);
    if (type == MessageType::Padding) {
      if (h.length != toEnd) return corrupt(read, "padding that does not reach the end of the ring");
      read += h.length;
      continue;
    }
    if (h.length > kMaxMessage) return corrupt(read, "message longer than " + std::to_string(kMaxMessage));
    // Copied out first: the producer's memory is only read once, then checked and used.
    scratch_.assign(data_ + offset + sizeof h, data_ + offset + h.length);
    const std::uint8_t* body = scratch_.data();
    const std::size_t size = scratch_.size();
    switch (type) {
      case MessageType::Record: {
        if (size != sizeof(GpuRecord)) return corrupt(read, "record of " + std::to_string(size) + " bytes");
        GpuRecord rec;
        std::memcpy(&rec, body, sizeof rec);
        sink.onRecord(rec);
        ++records;
        break;
      }
      case MessageType::String: {
        StringMessage m;
        if (size < sizeof m) return corrupt(read, "short string message");
        std::memcpy(&m, body, sizeof m);
        if (m.id == 0 || m.size > size - sizeof m) return corrupt(read, "string message with a bad id or size");
        sink.onString(m.id, std::string_view(reinterpret_cast<const char*>(body + sizeof m), m.size));
        break;
      }
      case MessageType::Site: {
        SiteMessage m;
        if (size < sizeof m) return corrupt(read, "short site message");
        std::memcpy(&m, body, sizeof m);
        const std::size_t need = sizeof m + m.pythonCount * sizeof(PythonFrameWire) +
                                 m.nativeCount * sizeof(NativeFrameWire);
        if (m.id == 0 || need > size) return corrupt(read, "site message with a bad id or frame count");
        std::vector<PythonFrameWire> py(m.pythonCount);
        std::vector<NativeFrameWire> nat(m.nativeCount);
        if (!py.empty()) std::memcpy(py.data(), body + sizeof m, py.size() * sizeof py[0]);
        if (!nat.empty())
          std::memcpy(nat.data(), body + sizeof m + py.size() * sizeof(PythonFrameWire), nat.size() * sizeof nat[0]);
        sink.onSite(m, py, nat);
        break;
      }
      case MessageType::CudaError: {
        CudaErrorMessage m;
        if (size < sizeof m) return corrupt(read, "short CUDA error message");
        std::memcpy(&m, body, sizeof m);
        std::vector<CallerWire> callers;
        if (size >= sizeof m + 8) {
          std::uint32_t n = 0;
          std::memcpy(&n, body + sizeof m, sizeof n);
          if (n > 64 || sizeof m + 8 + n * sizeof(CallerWire) > size) return corrupt(read, "CUDA error message with a bad caller count");
          callers.resize(n);
          if (n) std::memcpy(callers.data(), body + sizeof m + 8, n * sizeof(CallerWire));
        }
        sink.onCudaError(m, callers);
        break;
      }
      case MessageType::GraphNode: {
        GraphNodeMessage m;
        if (size < sizeof m) return corrupt(read, "short graph node message");
        std::memcpy(&m, body, sizeof m);
        sink.onGraphNode(m);
        break;
      }
      case MessageType::Device: {
        DeviceMessage m;
        if (size < sizeof m) return corrupt(read, "short device message");
        std::memcpy(&m, body, sizeof m);
        sink.onDevice(m);
        break;
      }
      case MessageType::ObjectName: {
        ObjectNameMessage m;
        if (size < sizeof m) return corrupt(read, "short object name message");
        std::memcpy(&m, body, sizeof m);
        sink.onObjectName(m);
        break;
      }
      case MessageType::KernelMetrics: {
        KernelMetricsMessage m;
        if (size < sizeof m) return corrupt(read, "short kernel metrics message");
        std::memcpy(&m, body, sizeof m);
        sink.onKernelMetrics(m);
        break;
      }
      default:
        break;  // a newer producer's message type: skipped by its length
    }
    read += h.length;
  }
  at(header_->readPos).store(read, std::memory_order_release);
  return records;
}

CollectorStatus RingReader::status() const {
  CollectorStatus s;
  s.pid = header_->pid;
  s.path = path_;
  char text[kStatusTextSize];
  for (int tries = 0;; ++tries) {
    const std::uint32_t before = at(header_->statusSeq).load(std::memory_order_acquire);
    if (before & 1) {
      if (tries < 1000) {
        std::this_thread::yield();
        continue;
      }
      // A producer stopped halfway through a status write (killed, or ptrace-stopped there):
      // what is there is read as it is.
    }
    s.state = static_cast<State>(at(header_->state).load(std::memory_order_relaxed));
    s.mode = static_cast<Mode>(at(header_->mode).load(std::memory_order_relaxed));
    auto* words = reinterpret_cast<std::uint64_t*>(header_->statusText);
    for (std::size_t i = 0; i < kStatusTextSize / 8; ++i) {
      std::uint64_t w = at(words[i]).load(std::memory_order_relaxed);
      std::memcpy(text + i * 8, &w, 8);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (at(header_->statusSeq).load(std::memory_order_relaxed) == before || tries >= 1000) break;
  }
  text[kStatusTextSize - 1] = 0;
  s.text = text;
  s.cuptiVersion = at(header_->cuptiVersion).load(std::memory_order_relaxed);
  s.builtCuptiVersion = at(header_->builtCuptiVersion).load(std::memory_order_relaxed);
  s.recordsWritten = at(header_->recordsWritten).load(std::memory_order_relaxed);
  s.droppedRecords = at(header_->droppedRecords).load(std::memory_order_relaxed);
  s.droppedMessages = at(header_->droppedMessages).load(std::memory_order_relaxed);
  s.cuptiDropped = at(header_->cuptiDropped).load(std::memory_order_relaxed);
  s.unjoinedLaunches = at(header_->unjoinedLaunches).load(std::memory_order_relaxed);
  s.sitesOverflowed = at(header_->sitesOverflowed).load(std::memory_order_relaxed);
  s.cudaErrors = at(header_->cudaErrors).load(std::memory_order_relaxed);
  s.heartbeatNs = at(header_->heartbeatNs).load(std::memory_order_relaxed);
  s.createdRealtimeNs = header_->createdRealtimeNs;
  s.createdMonotonicNs = header_->createdMonotonicNs;
  s.alive = producerAlive();
  if (!corrupt_.empty()) s.problem = corrupt_;
  return s;
}

bool RingReader::producerAlive() const {
  // The producer holds LOCK_EX on its own open file for as long as it lives (and it is not
  // inherited across exec); a shared lock we can take means it is gone.
  if (flock(fd_, LOCK_SH | LOCK_NB) == 0) {
    flock(fd_, LOCK_UN);
    return false;
  }
  return true;
}

std::uint32_t RingReader::requestFlush() {
  const std::uint32_t request = at(header_->flushRequest).fetch_add(1, std::memory_order_acq_rel) + 1;
  futexWakeAll(&header_->flushRequest);
  return request;
}

bool RingReader::flushServed(std::uint32_t request) const {
  // Wrap-safe: served once flushDone has reached the request.
  const std::uint32_t done = at(header_->flushDone).load(std::memory_order_acquire);
  return static_cast<std::int32_t>(done - request) >= 0;
}

bool RingReader::waitFlushed(std::uint32_t request, std::chrono::milliseconds timeout) const {
  const std::uint64_t deadline = monotonicNs() + static_cast<std::uint64_t>(timeout.count()) * 1000000ull;
  while (!flushServed(request)) {
    const std::uint64_t now = monotonicNs();
    if (now >= deadline) return false;
    const std::uint32_t done = at(header_->flushDone).load(std::memory_order_acquire);
    futexWait(&header_->flushDone, done, std::min<std::uint64_t>(deadline - now, 10000000ull));
  }
  return true;
}

std::uint32_t RingReader::requestProfile(std::string_view kernel, std::uint32_t count) {
  char text[kProfileKernelSize] = {};
  std::memcpy(text, kernel.data(), std::min(kernel.size(), kProfileKernelSize - 1));
  auto seq = at(header_->profileSeq);
  std::uint32_t now = seq.load(std::memory_order_relaxed);
  if (now & 1) ++now;  // a reader that died halfway left it odd
  seq.store(now + 1, std::memory_order_relaxed);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  at(header_->profileCount).store(count, std::memory_order_relaxed);
  auto* words = reinterpret_cast<std::uint64_t*>(header_->profileKernel);
  for (std::size_t i = 0; i < kProfileKernelSize / 8; ++i) {
    std::uint64_t w;
    std::memcpy(&w, text + i * 8, 8);
    at(words[i]).store(w, std::memory_order_relaxed);
  }
  seq.store(now + 2, std::memory_order_release);  // even: one request
  // The collector's thread sleeps on this word between flushes: woken, it looks at once.
  futexWakeAll(&header_->flushRequest);
  return now + 2;
}

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
    KernelMetricsEvent e;
    e.pid = r_.reader->pid();
    e.correlation = m.correlation;
    e.device = m.device;
    e.request = m.request;
    e.remaining = m.remaining;
    e.passes = m.passes;
    e.kernel = text(m.kernel);
    e.error = text(m.error);
    e.result = m.result;
    e.time = m.time;
    e.smThroughputPct = m.smThroughputPct;
    e.dramThroughputPct = m.dramThroughputPct;
    e.achievedOccupancyPct = m.achievedOccupancyPct;
    e.durationNs = m.durationNs;
    out_.metrics.push_back(std::move(e));
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
