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

}  // namespace strata::cuda
