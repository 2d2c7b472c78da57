// The producer side of a collector ring: makes the file, appends messages, keeps the status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "strata/cuda/collector/ring_format.hpp"
#include "strata/result.hpp"

namespace strata::cuda::ring {

class RingWriter {
 public:
  RingWriter() = default;
  ~RingWriter();
  RingWriter(const RingWriter&) = delete;
  RingWriter& operator=(const RingWriter&) = delete;

  // Makes <dir>/strata-gpu-<pid>[-n].ring with `capacity` bytes for messages (rounded up to a
  // power of two, at least kMinCapacity, at most 1 GiB). The space is reserved up front, so a
  // full disk shows here and never as SIGBUS in the target later. The file stays locked
  // (flock) while this process lives: that is how the reader tells a live producer from a
  // finished one, whatever happens to the pid.
  Result<void> create(const std::string& dir, std::string_view session, std::size_t capacity, Mode mode);

  bool isOpen() const { return header_ != nullptr; }
  const std::string& path() const { return path_; }
  Header* header() { return header_; }
  std::size_t capacity() const { return capacity_; }

  // In a forked child: the mapping is the parent's, so writing must stop. Nothing is unmapped
  // or unlocked (the lock belongs to the open file the parent shares).
  void abandon();

  // The producer serializes these (the collector's producer lock).
  // Appends one message made of `payload` then `tail`; false (nothing written) when it does
  // not fit.
  bool write(MessageType type, const void* payload, std::size_t size, const void* tail = nullptr,
             std::size_t tailSize = 0);
  // Appends records until one does not fit; returns how many were written.
  std::size_t writeRecords(const GpuRecord* records, std::size_t n);
  std::size_t freeBytes() const;

  // Counters and status: safe from any thread (atomic), the status text under its sequence lock
  // (writers of it serialize among themselves).
  void countDroppedRecords(std::uint64_t n);
  void countDroppedMessages(std::uint64_t n);
  void addCuptiDropped(std::uint64_t n);
  void addUnjoinedLaunches(std::uint64_t n);
  void addSitesOverflowed(std::uint64_t n);
  void countCudaError();
  void heartbeat();
  void setStatus(State state, std::string_view text);
  void setVersions(std::uint32_t cupti, std::uint32_t built);
  void setMode(Mode mode);
  State state() const;

  // The flush handshake (see Header).
  std::uint32_t flushRequested() const;
  void markFlushed(std::uint32_t request);
  std::uint32_t* flushRequestWord() { return &header_->flushRequest; }

  // A request the reader wrote that nobody took yet (two relaxed loads of the header: cheap
  // enough for the launch callback, which takes it then, so the next launch is measured).
  bool profileRequestWaiting() const;
  // A profile request the reader wrote since the last one taken (see Header): its kernel name
  // part, launch count and sequence number; false when there is none new (or one half written).
  bool takeProfileRequest(std::string& kernel, std::uint32_t& count, std::uint32_t& sequence);

 private:
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(header_) + kHeaderSize; }
  // Places one message at the producer's private position without publishing it.
  bool place(MessageType type, const void* payload, std::size_t size, const void* tail, std::size_t tailSize,
             std::uint64_t readPos);

  Header* header_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t capacity_ = 0;
  std::uint64_t writePos_ = 0;  // ahead of header_->writePos until published
  int fd_ = -1;
  std::string path_;
};

}  // namespace strata::cuda::ring
