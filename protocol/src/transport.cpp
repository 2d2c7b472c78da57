// Framed connections over Asio streams, with bounded write queues and clean close.
#include "strata/protocol/transport.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>

namespace strata::protocol {
namespace {

class DescriptorStream final : public ByteStream {
 public:
  DescriptorStream(asio::io_context& io, int readFd, int writeFd, std::string name)
      : in_(io, readFd), out_(io, writeFd), name_(std::move(name)) {}
  void asyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    in_.async_read_some(buffer, std::move(handler));
  }
  void asyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    asio::async_write(out_, buffers, std::move(handler));
  }
  void close() override {
    boost::system::error_code ec;
    in_.close(ec);
    out_.close(ec);
  }
  std::string describe() const override { return name_; }

 private:
  asio::posix::stream_descriptor in_, out_;
  std::string name_;
};

class SocketStream final : public ByteStream {
 public:
  explicit SocketStream(asio::ip::tcp::socket s) : socket_(std::move(s)) {
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    name_ = ec ? "tcp" : "tcp " + ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  void asyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    socket_.async_read_some(buffer, std::move(handler));
  }
  void asyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    asio::async_write(socket_, buffers, std::move(handler));
  }
  void close() override {
    boost::system::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
  std::string describe() const override { return name_; }

 private:
  asio::ip::tcp::socket socket_;
  std::string name_;
};

}  // namespace

std::unique_ptr<ByteStream> makeDescriptorStream(asio::io_context& io, int readFd, int writeFd,
                                                 std::string name) {
  return std::make_unique<DescriptorStream>(io, readFd, writeFd, std::move(name));
}

std::unique_ptr<ByteStream> makeSocketStream(asio::ip::tcp::socket socket) {
  return std::make_unique<SocketStream>(std::move(socket));
}

Connection::Connection(std::unique_ptr<ByteStream> stream)
    : stream_(std::move(stream)), readBuffer_(64 * 1024) {}

Connection::~Connection() = default;

void Connection::start(Callbacks callbacks) {
  callbacks_ = std::move(callbacks);
  readMore();
}

void Connection::readMore() {
  if (closed_ || readStopped_) return;
  auto self = shared_from_this();
  stream_->asyncReadSome(asio::buffer(readBuffer_), [self](const boost::system::error_code& ec,
                                                            std::size_t n) {
    if (self->closed_ || self->readStopped_) return;
    if (ec) {
      // EOF or a broken pipe: the peer is gone. Deliver nothing more and tell the owner.
      self->readStopped_ = true;
      self->finish();
      return;
    }
    self->decoder_.feed(std::string_view(self->readBuffer_.data(), n));
    std::string body;
    for (;;) {
      auto status = self->decoder_.next(body);
      if (status == FrameDecoder::Status::NeedMore) break;
      if (status == FrameDecoder::Status::Error) {
        self->readStopped_ = true;
        if (self->callbacks_.onFramingError) self->callbacks_.onFramingError(body);
        self->close();
        return;
      }
      if (self->callbacks_.onFrame) self->callbacks_.onFrame(std::move(body));
      if (self->closed_ || self->readStopped_) return;
    }
    self->readMore();
  });
}

void Connection::send(std::string body) {
  if (closed_ || closing_) return;
  std::string frame = encodeFrame(body);
  queuedBytes_ += frame.size();
  pending_.push_back(std::move(frame));
  writeMore();
}

void Connection::writeMore() {
  if (writeInFlight_ || closed_) return;
  if (pending_.empty()) {
    if (closing_) finish();
    return;
  }
  // Gather many small frames into one write: one syscall for a burst of events.
  writing_.clear();
  std::vector<asio::const_buffer> buffers;
  std::size_t batch = 0;
  while (!pending_.empty() && (buffers.empty() || batch < 1024 * 1024) && buffers.size() < 64) {
    writing_.push_back(std::move(pending_.front()));
    pending_.pop_front();
    batch += writing_.back().size();
  }
  for (const auto& s : writing_) buffers.emplace_back(asio::buffer(s));
  writeInFlight_ = true;
  auto self = shared_from_this();
  stream_->asyncWrite(buffers, [self, batch](const boost::system::error_code& ec, std::size_t) {
    self->writeInFlight_ = false;
    self->queuedBytes_ -= batch;
    self->writing_.clear();
    if (ec) {
      self->pending_.clear();
      self->queuedBytes_ = 0;
      self->finish();
      return;
    }
    self->runDrainWaiters();
    self->writeMore();
  });
}

void Connection::whenDrained(std::function<void()> fn) {
  if (queuedBytes_ < kLowWatermark || closed_) {
    fn();
    return;
  }
  drainWaiters_.push_back(std::move(fn));
}

void Connection::runDrainWaiters() {
  if (queuedBytes_ >= kLowWatermark && !closed_) return;
  auto waiters = std::move(drainWaiters_);
  drainWaiters_.clear();
  for (auto& w : waiters) w();
}

void Connection::close() {
  if (closed_ || closing_) return;
  closing_ = true;
  readStopped_ = true;
  if (!writeInFlight_ && pending_.empty()) finish();
}

void Connection::finish() {
  if (closed_) return;
  closed_ = true;
  stream_->close();
  runDrainWaiters();
  if (callbacks_.onClosed) {
    auto cb = std::move(callbacks_.onClosed);
    callbacks_ = {};
    cb();
  } else {
    callbacks_ = {};
  }
}

Result<HostPort> parseHostPort(const std::string& text) {
  HostPort hp;
  std::string portText;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Error{errors::kBadAddress, "invalid address '" + text + "': expected [IPv6]:PORT", true};
    hp.host = text.substr(1, close - 1);
    portText = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string::npos) {
    hp.host = text.substr(0, colon);
    portText = text.substr(colon + 1);
  } else {
    portText = text;
  }
  if (hp.host.empty()) hp.host = "127.0.0.1";
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (portText.empty() || ec != std::errc() || ptr != portText.data() + portText.size() || port > 65535)
    return Error{errors::kBadAddress, "invalid port in '" + text + "': expected a number from 0 to 65535", true};
  hp.port = static_cast<std::uint16_t>(port);
  return hp;
}

bool isLoopback(const asio::ip::address& address) {
  if (address.is_v4()) return address.to_v4().is_loopback();
  auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback();
  return v6.is_loopback();
}

Result<std::unique_ptr<Listener>> Listener::open(
    asio::io_context& io, const HostPort& where,
    std::function<void(asio::ip::tcp::socket)> onAccept) {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io);
  auto results = resolver.resolve(where.host, std::to_string(where.port),
                                  asio::ip::tcp::resolver::passive, ec);
  if (ec || results.empty())
    return Error{errors::kHostUnresolved, "cannot resolve '" + where.host + "': " + ec.message(), true};
  auto endpoint = results.begin()->endpoint();
  std::unique_ptr<Listener> l(new Listener(io, std::move(onAccept)));
  l->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) l->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) l->acceptor_.bind(endpoint, ec);
  if (!ec) l->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error{errors::kListenFailed, "cannot listen on " + endpoint.address().to_string() + ":" +
                        std::to_string(endpoint.port()) + ": " + ec.message(), true};
  fcntl(l->acceptor_.native_handle(), F_SETFD, FD_CLOEXEC);
  l->acceptNext();
  return l;
}

void Listener::acceptNext() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, asio::ip::tcp::socket s) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      boost::system::error_code ignored;
      s.set_option(asio::ip::tcp::no_delay(true), ignored);
      onAccept_(std::move(s));
    }
    acceptNext();
  });
}

void Listener::close() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

Result<asio::ip::tcp::socket> dial(asio::io_context& io, const HostPort& where) {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io);
  auto results = resolver.resolve(where.host, std::to_string(where.port), ec);
  if (ec) return Error{errors::kHostUnresolved, "cannot resolve '" + where.host + "': " + ec.message(), true};
  asio::ip::tcp::socket socket(io);
  asio::connect(socket, results, ec);
  if (ec)
    return Error{errors::kConnectFailed, "cannot connect to " + where.host + ":" + std::to_string(where.port) + ": " +
                        ec.message(), true};
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  return socket;
}

}  // namespace strata::protocol
