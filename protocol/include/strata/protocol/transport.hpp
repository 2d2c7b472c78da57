// Transports over Boost.Asio: a framed message connection over stdio or a TCP socket, and
// the TCP listener/dialer. Everything runs on one io_context thread, so no locks.
#pragma once

#include <boost/asio.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/protocol/framing.hpp"
#include "strata/result.hpp"

namespace strata::protocol {

namespace asio = boost::asio;

// The byte pipe under a connection: stdin/stdout, a socket, a pipe pair.
class ByteStream {
 public:
  using Handler = std::function<void(const boost::system::error_code&, std::size_t)>;
  virtual ~ByteStream() = default;
  virtual void asyncReadSome(asio::mutable_buffer buffer, Handler handler) = 0;
  virtual void asyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) = 0;
  virtual void close() = 0;
  virtual std::string describe() const = 0;
};

std::unique_ptr<ByteStream> makeDescriptorStream(asio::io_context& io, int readFd, int writeFd,
                                                 std::string name);
std::unique_ptr<ByteStream> makeSocketStream(asio::ip::tcp::socket socket);

// A framed message connection. Bodies in, bodies out; framing errors reported once, then
// the connection closes.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  struct Callbacks {
    std::function<void(std::string body)> onFrame;
    std::function<void(const std::string& reason)> onFramingError;
    std::function<void()> onClosed;  // peer closed, read failed, or close() finished
  };

  // Above this many queued bytes, producers (debuggee output) should wait for whenDrained().
  static constexpr std::size_t kHighWatermark = 8u * 1024u * 1024u;
  static constexpr std::size_t kLowWatermark = 1u * 1024u * 1024u;

  explicit Connection(std::unique_ptr<ByteStream> stream);
  ~Connection();

  void start(Callbacks callbacks);
  void send(std::string body);
  std::size_t queuedBytes() const { return queuedBytes_; }
  bool congested() const { return queuedBytes_ >= kHighWatermark; }
  // Runs `fn` once the write queue is below the low watermark (at once if it already is).
  void whenDrained(std::function<void()> fn);
  // Flushes queued writes, then closes.
  void close();
  bool closed() const { return closed_; }
  std::string describe() const { return stream_->describe(); }

 private:
  void readMore();
  void writeMore();
  void finish();
  void runDrainWaiters();

  std::unique_ptr<ByteStream> stream_;
  Callbacks callbacks_;
  FrameDecoder decoder_;
  std::vector<char> readBuffer_;
  std::deque<std::string> pending_;
  std::vector<std::string> writing_;
  std::size_t queuedBytes_ = 0;
  bool writeInFlight_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool readStopped_ = false;
  std::vector<std::function<void()>> drainWaiters_;
};

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
// "HOST:PORT", "[::1]:PORT" or ":PORT"/"PORT" (loopback).
Result<HostPort> parseHostPort(const std::string& text);
bool isLoopback(const asio::ip::address& address);

// Binds and listens; calls onAccept for each connection (TCP_NODELAY already set).
class Listener {
 public:
  static Result<std::unique_ptr<Listener>> open(
      asio::io_context& io, const HostPort& where,
      std::function<void(asio::ip::tcp::socket)> onAccept);
  asio::ip::tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }
  void close();

 private:
  Listener(asio::io_context& io, std::function<void(asio::ip::tcp::socket)> onAccept)
      : acceptor_(io), onAccept_(std::move(onAccept)) {}
  void acceptNext();
  asio::ip::tcp::acceptor acceptor_;
  std::function<void(asio::ip::tcp::socket)> onAccept_;
};

// Resolves and connects synchronously (a client does nothing else until it is connected).
Result<asio::ip::tcp::socket> dial(asio::io_context& io, const HostPort& where);

}  // namespace strata::protocol
