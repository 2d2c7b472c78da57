// Content-Length framing of DAP messages: an incremental decoder and the encoder.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace strata::protocol {

inline constexpr std::size_t kMaxContentLength = 64u * 1024u * 1024u;
inline constexpr std::size_t kMaxHeaderBytes = 16u * 1024u;

// Feed it bytes as they arrive (split or coalesced reads alike) and pull whole bodies out.
// After an error the stream cannot be resynchronised: the decoder stays in the error state.
class FrameDecoder {
 public:
  enum class Status { NeedMore, Frame, Error };

  void feed(std::string_view bytes);
  // Frame: `out` holds the next body. Error: `out` holds the reason. NeedMore: `out` untouched.
  Status next(std::string& out);

  bool failed() const { return !error_.empty(); }
  std::size_t buffered() const { return buffer_.size() - start_; }

 private:
  Status fail(std::string reason, std::string& out);

  std::string buffer_;
  std::size_t start_ = 0;              // first unconsumed byte of buffer_
  std::size_t pendingLength_ = 0;      // body length once a header has been parsed
  std::size_t headerScanned_ = 0;      // header bytes already searched for the blank line
  bool haveHeader_ = false;
  std::string error_;
};

// "Content-Length: N\r\n\r\n" + body.
std::string encodeFrame(std::string_view body);

}  // namespace strata::protocol
