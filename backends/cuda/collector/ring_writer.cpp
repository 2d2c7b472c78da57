// The producer side of a collector ring (see ring_writer.hpp and the README's format section).
#include "ring_writer.hpp"

#include "strata/cuda/collector/futex.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace strata::cuda::ring {
namespace {

template <class T>
std::atomic_ref<T> at(T& field) {
  return std::atomic_ref<T>(field);
}

std::uint64_t clockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::size_t roundCapacity(std::size_t wanted) {
  std::size_t c = kMinCapacity;
  while (c < wanted && c < (std::size_t{1} << 30)) c <<= 1;
  return c;
}

}  // namespace

RingWriter::~RingWriter() {
  if (header_) munmap(header_, mapped_);
  if (fd_ >= 0) close(fd_);
}

Result<void> RingWriter::create(const std::string& dir, std::string_view session, std::size_t capacity, Mode mode) {
  if (isOpen()) return Error{errors::kGpuRing, "the ring " + path_ + " is already open", false};
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errnoError(errors::kGpuRing, "mkdir " + dir);
  const pid_t pid = getpid();
  const std::string stem = dir + "/" + kFilePrefix + std::to_string(pid);
  int fd = -1;
  std::string path;
  // The same pid after an exec finds its earlier image's ring still there for the reader.
  for (int n = 0; n < 1000 && fd < 0; ++n) {
    path = n == 0 ? stem + kFileSuffix : stem + "-" + std::to_string(n) + kFileSuffix;
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return errnoError(errors::kGpuRing, "create " + path);
  }
  if (fd < 0) return Error{errors::kGpuRing, "create " + stem + "-N" + kFileSuffix + ": 1000 rings of this pid already exist", false};
  auto fail = [&](const std::string& op) -> Result<void> {
    Error e = errnoError(errors::kGpuRing, op + " " + path);
    unlink(path.c_str());
    close(fd);
    return e;
  };
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) return fail("flock");
  capacity_ = roundCapacity(capacity);
  mapped_ = kHeaderSize + capacity_;
  if (int err = posix_fallocate(fd, 0, static_cast<off_t>(mapped_)); err != 0) {
    errno = err;
    return fail("reserve " + std::to_string(mapped_) + " bytes for");
  }
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail("mmap");
  header_ = static_cast<Header*>(p);
  std::memset(header_, 0, sizeof(Header));
  header_->formatVersion = kFormatVersion;
  header_->headerSize = kHeaderSize;
  header_->capacity = capacity_;
  header_->pid = static_cast<std::uint32_t>(pid);
  header_->recordSize = sizeof(GpuRecord);
  header_->createdRealtimeNs = clockNs(CLOCK_REALTIME);
  header_->createdMonotonicNs = clockNs(CLOCK_MONOTONIC);
  std::memcpy(header_->session, session.data(), std::min(session.size(), kSessionSize - 1));
  header_->state = static_cast<std::uint32_t>(State::Starting);
  header_->mode = static_cast<std::uint32_t>(mode);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(header_->magic, kMagic, sizeof kMagic);
  fd_ = fd;
  path_ = path;
  writePos_ = 0;
  return {};
}

void RingWriter::abandon() {
  // The child keeps the mapping (unmapping is harmless but pointless) and drops its fd.
  header_ = nullptr;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::size_t RingWriter::freeBytes() const {
  if (!header_) return 0;
  const std::uint64_t read = at(header_->readPos).load(std::memory_order_acquire);
  const std::uint64_t used = writePos_ - read;
  return used > capacity_ ? 0 : capacity_ - used;
}

bool RingWriter::place(MessageType type, const void* payload, std::size_t size, const void* tail,
                       std::size_t tailSize, std::uint64_t readPos) {
  const std::size_t length = alignUp(sizeof(MessageHeader) + size + tailSize);
  if (length > kMaxMessage) return false;
  const std::uint64_t used = writePos_ - readPos;
  if (used > capacity_) return false;  // a consumer that wrote nonsense: write nothing
  std::size_t offset = writePos_ & (capacity_ - 1);
  const std::size_t toEnd = capacity_ - offset;
  const std::size_t needed = length <= toEnd ? length : toEnd + length;
  if (capacity_ - used < needed) return false;
  if (length > toEnd) {
    MessageHeader pad{static_cast<std::uint32_t>(toEnd), static_cast<std::uint16_t>(MessageType::Padding), 0};
    std::memcpy(data() + offset, &pad, sizeof pad);
    writePos_ += toEnd;
    offset = 0;
  }
  std::uint8_t* out = data() + offset;
  MessageHeader h{static_cast<std::uint32_t>(length), static_cast<std::uint16_t>(type), 0};
  std::memcpy(out, &h, sizeof h);
  if (size) std::memcpy(out + sizeof h, payload, size);
  if (tailSize) std::memcpy(out + sizeof h + size, tail, tailSize);
  const std::size_t used_bytes = sizeof h + size + tailSize;
  if (length > used_bytes) std::memset(out + used_bytes, 0, length - used_bytes);
  writePos_ += length;
  return true;
}

bool RingWriter::write(MessageType type, const void* payload, std::size_t size, const void* tail,
                       std::size_t tailSize) {
  if (!header_) return false;
  const std::uint64_t read = at(header_->readPos).load(std::memory_order_acquire);
  if (!place(type, payload, size, tail, tailSize, read)) return false;
  at(header_->writePos).store(writePos_, std::memory_order_release);
  return true;
}

std::size_t RingWriter::writeRecords(const GpuRecord* records, std::size_t n) {
  if (!header_ || n == 0) return 0;
  const std::uint64_t read = at(header_->readPos).load(std::memory_order_acquire);
  std::size_t written = 0;
  while (written < n && place(MessageType::Record, &records[written], sizeof(GpuRecord), nullptr, 0, read))
    ++written;
  if (written) {
    at(header_->writePos).store(writePos_, std::memory_order_release);
    at(header_->recordsWritten).fetch_add(written, std::memory_order_relaxed);
  }
  return written;
}

void RingWriter::countDroppedRecords(std::uint64_t n) {
  if (header_ && n) at(header_->droppedRecords).fetch_add(n, std::memory_order_relaxed);
}
void RingWriter::countDroppedMessages(std::uint64_t n) {
  if (header_ && n) at(header_->droppedMessages).fetch_add(n, std::memory_order_relaxed);
}
void RingWriter::addCuptiDropped(std::uint64_t n) {
  if (header_ && n) at(header_->cuptiDropped).fetch_add(n, std::memory_order_relaxed);
}
void RingWriter::addUnjoinedLaunches(std::uint64_t n) {
  if (header_ && n) at(header_->unjoinedLaunches).fetch_add(n, std::memory_order_relaxed);
}
void RingWriter::addSitesOverflowed(std::uint64_t n) {
  if (header_ && n) at(header_->sitesOverflowed).fetch_add(n, std::memory_order_relaxed);
}
void RingWriter::countCudaError() {
  if (header_) at(header_->cudaErrors).fetch_add(1, std::memory_order_relaxed);
}
void RingWriter::heartbeat() {
  if (header_) at(header_->heartbeatNs).store(clockNs(CLOCK_MONOTONIC), std::memory_order_relaxed);
}

void RingWriter::setStatus(State state, std::string_view text) {
  if (!header_) return;
  auto seq = at(header_->statusSeq);
  seq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  at(header_->state).store(static_cast<std::uint32_t>(state), std::memory_order_relaxed);
  char buf[kStatusTextSize] = {};
  std::memcpy(buf, text.data(), std::min(text.size(), kStatusTextSize - 1));
  // Word by word, so a reader racing the sequence lock reads torn text it then discards,
  // never a torn word.
  auto* words = reinterpret_cast<std::uint64_t*>(header_->statusText);
  for (std::size_t i = 0; i < kStatusTextSize / 8; ++i) {
    std::uint64_t w;
    std::memcpy(&w, buf + i * 8, 8);
    at(words[i]).store(w, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
  seq.fetch_add(1, std::memory_order_release);  // even: consistent
}

void RingWriter::setVersions(std::uint32_t cupti, std::uint32_t built) {
  if (!header_) return;
  at(header_->cuptiVersion).store(cupti, std::memory_order_relaxed);
  at(header_->builtCuptiVersion).store(built, std::memory_order_relaxed);
}

void RingWriter::setMode(Mode mode) {
  if (header_) at(header_->mode).store(static_cast<std::uint32_t>(mode), std::memory_order_relaxed);
}

State RingWriter::state() const {
  return header_ ? static_cast<State>(at(header_->state).load(std::memory_order_relaxed)) : State::Off;
}

std::uint32_t RingWriter::flushRequested() const {
  return header_ ? at(header_->flushRequest).load(std::memory_order_acquire) : 0;
}

void RingWriter::markFlushed(std::uint32_t request) {
  if (!header_) return;
  at(header_->flushDone).store(request, std::memory_order_release);
  futexWakeAll(&header_->flushDone);
}

bool RingWriter::profileRequestWaiting() const {
  if (!header_) return false;
  const std::uint32_t seq = at(header_->profileSeq).load(std::memory_order_relaxed);
  return !(seq & 1) && seq != at(header_->profileTaken).load(std::memory_order_relaxed);
}

bool RingWriter::takeProfileRequest(std::string& kernel, std::uint32_t& count, std::uint32_t& sequence) {
  if (!header_) return false;
  const std::uint32_t seq = at(header_->profileSeq).load(std::memory_order_acquire);
  if ((seq & 1) || seq == at(header_->profileTaken).load(std::memory_order_relaxed)) return false;
  char text[kProfileKernelSize];
  auto* words = reinterpret_cast<std::uint64_t*>(header_->profileKernel);
  for (std::size_t i = 0; i < kProfileKernelSize / 8; ++i) {
    const std::uint64_t w = at(words[i]).load(std::memory_order_relaxed);
    std::memcpy(text + i * 8, &w, 8);
  }
  const std::uint32_t n = at(header_->profileCount).load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  // The reader wrote again meanwhile: the next round takes the newer request.
  if (at(header_->profileSeq).load(std::memory_order_relaxed) != seq) return false;
  at(header_->profileTaken).store(seq, std::memory_order_relaxed);
  text[kProfileKernelSize - 1] = 0;
  kernel = text;
  count = n;
  sequence = seq;
  return true;
}

}  // namespace strata::cuda::ring
