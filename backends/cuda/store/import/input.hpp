// A trace file read in fixed-size pieces, inflated on the fly when it is gzip (zlib) by a
// thread of its own a few pieces ahead, so inflating and parsing overlap.
#pragma once

#include <zlib.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "strata/result.hpp"

namespace strata::cuda::input {

class File {
 public:
  ~File();
  static Result<std::unique_ptr<File>> open(const std::string& path);
  // Up to n bytes of (decompressed) content; 0 at the end. Errors name the file and position.
  Result<std::size_t> read(char* out, std::size_t n);
  bool gzip() const { return gzip_; }
  // Bytes of the file read so far (compressed ones for gzip) and its size, for progress: any
  // thread may ask.
  std::uint64_t consumed() const { return consumed_.load(std::memory_order_relaxed); }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  File() = default;
  Result<std::size_t> inflateSome(char* out, std::size_t n);
  std::uint64_t compressedOffset() const { return rawOffset_ - zs_.avail_in; }
  void inflateAhead();

  std::string path_;
  std::FILE* f_ = nullptr;
  bool gzip_ = false;
  bool inflating_ = false;
  bool streamEnded_ = false;
  z_stream zs_{};
  std::vector<unsigned char> in_;
  std::uint64_t rawOffset_ = 0;  // bytes read from the file so far
  std::atomic<std::uint64_t> consumed_{0};
  std::uint64_t size_ = 0;

  // Inflated pieces the thread has ready (bounded); an error or the end comes in order.
  struct Piece {
    std::vector<char> data;
    std::optional<Error> error;
  };
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Piece> ready_;
  bool stop_ = false;
  Piece current_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

// Line and column (from 1) of a byte offset into the (decompressed) content, read again from
// the start: only an error message needs it.
std::pair<std::uint64_t, std::uint64_t> lineColumn(const std::string& path, std::uint64_t offset);

// The first bytes of a file, decompressed if it is gzip (for format detection).
Result<std::string> head(const std::string& path, std::size_t n);

}  // namespace strata::cuda::input
