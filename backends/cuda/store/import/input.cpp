// A trace file read in pieces, gzip inflated with zlib (concatenated members included).
#include "input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <sys/stat.h>

#include "strata/cuda/store.hpp"

namespace strata::cuda::input {

using store_errors::kIo;
using store_errors::kMalformed;

namespace {
constexpr std::size_t kPiece = 1 << 20;
constexpr std::size_t kAhead = 4;  // pieces inflated ahead of the parser (bounded memory)
}  // namespace

File::~File() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  if (inflating_) inflateEnd(&zs_);
  if (f_) std::fclose(f_);
}

void File::inflateAhead() {
  for (;;) {
    Piece p;
    p.data.resize(kPiece);
    auto got = inflateSome(p.data.data(), p.data.size());
    bool last = !got || *got == 0;
    if (got) p.data.resize(*got);
    else p.error = got.takeError();
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stop_ || ready_.size() < kAhead; });
    if (stop_) return;
    ready_.push_back(std::move(p));
    cv_.notify_all();
    if (last) return;
  }
}

Result<std::unique_ptr<File>> File::open(const std::string& path) {
  std::unique_ptr<File> f(new File);
  f->path_ = path;
  f->f_ = std::fopen(path.c_str(), "rb");
  if (!f->f_) return errnoError(kIo, "open " + path, errno);
  struct stat st{};
  if (::fstat(fileno(f->f_), &st) == 0) f->size_ = static_cast<std::uint64_t>(st.st_size);
  f->in_.resize(1 << 18);
  unsigned char magic[2] = {0, 0};
  std::size_t got = std::fread(magic, 1, 2, f->f_);
  std::rewind(f->f_);
  f->gzip_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (f->gzip_) {
    if (inflateInit2(&f->zs_, 16 + MAX_WBITS) != Z_OK) return Error{kIo, path + ": zlib: cannot start inflating", true};
    f->inflating_ = true;
    f->worker_ = std::thread([raw = f.get()] { raw->inflateAhead(); });
  }
  return f;
}

Result<std::size_t> File::read(char* out, std::size_t n) {
  if (!gzip_) {
    std::size_t got = std::fread(out, 1, n, f_);
    if (got == 0 && std::ferror(f_)) return errnoError(kIo, "read " + path_, errno);
    rawOffset_ += got;
    consumed_.store(rawOffset_, std::memory_order_relaxed);
    return got;
  }
  std::size_t total = 0;
  while (total < n && !done_) {
    if (pos_ == current_.data.size()) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !ready_.empty(); });
      current_ = std::move(ready_.front());
      ready_.pop_front();
      pos_ = 0;
      cv_.notify_all();
      lock.unlock();
      if (current_.error) {
        done_ = true;
        if (total) break;  // hand over what came before the error first
        return *current_.error;
      }
      if (current_.data.empty()) {
        done_ = true;
        break;
      }
    }
    std::size_t k = std::min(n - total, current_.data.size() - pos_);
    std::memcpy(out + total, current_.data.data() + pos_, k);
    pos_ += k;
    total += k;
  }
  if (total == 0 && current_.error) return *current_.error;
  return total;
}

Result<std::size_t> File::inflateSome(char* out, std::size_t n) {
  zs_.next_out = reinterpret_cast<Bytef*>(out);
  zs_.avail_out = static_cast<uInt>(n);
  while (zs_.avail_out > 0) {
    if (zs_.avail_in == 0) {
      std::size_t got = std::fread(in_.data(), 1, in_.size(), f_);
      if (got == 0 && std::ferror(f_)) return errnoError(kIo, "read " + path_, errno);
      rawOffset_ += got;
      consumed_.store(rawOffset_, std::memory_order_relaxed);
      zs_.next_in = in_.data();
      zs_.avail_in = static_cast<uInt>(got);
      if (got == 0) {
        if (!streamEnded_) {
          return Error{kMalformed, path_ + ": truncated gzip data (the compressed stream ends at byte " +
                                       std::to_string(rawOffset_) + " before its end marker)", true};
        }
        break;
      }
    }
    if (streamEnded_) {
      // Another gzip member follows (files written by concatenation are valid gzip).
      inflateReset(&zs_);
      streamEnded_ = false;
    }
    int rc = inflate(&zs_, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      streamEnded_ = true;
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return Error{kMalformed, path_ + ": corrupt gzip data near compressed byte " + std::to_string(compressedOffset()) +
                                   ": " + (zs_.msg ? zs_.msg : "inflate failed"), true};
    }
  }
  return n - zs_.avail_out;
}

std::pair<std::uint64_t, std::uint64_t> lineColumn(const std::string& path, std::uint64_t offset) {
  std::uint64_t line = 1, lineStart = 0, at = 0;
  auto f = File::open(path);
  if (!f) return {0, 0};
  std::vector<char> buf(kPiece);
  while (at < offset) {
    auto got = (*f)->read(buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), offset - at)));
    if (!got || *got == 0) break;
    for (std::size_t i = 0; i < *got; ++i) {
      if (buf[i] == '\n') line++, lineStart = at + i + 1;
    }
    at += *got;
  }
  return {line, offset - lineStart + 1};
}

Result<std::string> head(const std::string& path, std::size_t n) {
  auto f = File::open(path);
  if (!f) return f.takeError();
  std::string out(n, '\0');
  std::size_t total = 0;
  while (total < n) {
    auto got = (*f)->read(out.data() + total, n - total);
    if (!got) {
      if (total) break;  // a truncated file still has a head
      return got.takeError();
    }
    if (*got == 0) break;
    total += *got;
  }
  out.resize(total);
  return out;
}

}  // namespace strata::cuda::input
