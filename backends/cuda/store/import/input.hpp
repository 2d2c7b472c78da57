// A trace file read in fixed-size pieces, inflated on the fly when it is gzip (zlib).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
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
  const std::string& path() const { return path_; }
  std::uint64_t compressedOffset() const { return rawOffset_ - zs_.avail_in; }

 private:
  File() = default;
  std::string path_;
  std::FILE* f_ = nullptr;
  bool gzip_ = false;
  bool inflating_ = false;
  bool streamEnded_ = false;
  z_stream zs_{};
  std::vector<unsigned char> in_;
  std::uint64_t rawOffset_ = 0;  // bytes read from the file so far
};

// The first bytes of a file, decompressed if it is gzip (for format detection).
Result<std::string> head(const std::string& path, std::size_t n);

}  // namespace strata::cuda::input
