// The adapter's side of the agent's crash guard (crash_watch.hpp).
#include "backends/python/proxy/crash_watch.hpp"

#include <unistd.h>

#include <charconv>
#include <sstream>

#include "backends/python/proxy/peer_check.hpp"

namespace strata::backends {

namespace json = boost::json;
using boost::asio::ip::tcp;

std::optional<CrashReport> parseCrashLine(const std::string& line) {
  std::istringstream in(line);
  std::string tag, address;
  CrashReport r;
  if (!(in >> tag >> r.signal >> r.code >> address >> r.threadId) || tag != "STRATA-CRASH") return std::nullopt;
  if (address.rfind("0x", 0) != 0) return std::nullopt;
  auto [end, ec] = std::from_chars(address.data() + 2, address.data() + address.size(), r.address, 16);
  if (ec != std::errc() || end != address.data() + address.size() || r.signal <= 0 || r.threadId <= 0) return std::nullopt;
  return r;
}

CrashWatch::CrashWatch(boost::asio::io_context& io, std::function<void(const CrashReport&)> onCrash)
    : io_(io), onCrash_(std::move(onCrash)), token_(makeLaunchToken()) {}

CrashWatch::~CrashWatch() {
  *alive_ = false;
  if (listener_) listener_->close();
  if (guard_) {
    boost::system::error_code ignored;
    guard_->close(ignored);  // a thread waiting in the guard goes on
  }
}

Result<void> CrashWatch::open() {
  auto listener = listenForToken(io_, token_, alive_, [this](tcp::socket s, int pid) { onGuard(std::move(s), pid); });
  if (!listener) return listener.takeError();
  listener_ = std::move(*listener);
  return {};
}

json::object CrashWatch::agentArguments() const {
  return {{"address", "127.0.0.1:" + std::to_string(listener_->endpoint().port())},
          {"token", token_},
          {"tracer", static_cast<std::int64_t>(::getpid())}};
}

void CrashWatch::onGuard(tcp::socket socket, int pid) {
  // One guard per session: a later arm (a new session of the same process) replaces it.
  pid_ = pid;
  in_ = std::make_shared<boost::asio::streambuf>();
  guard_ = std::make_shared<tcp::socket>(std::move(socket));
  readLine();
}

void CrashWatch::readLine() {
  std::weak_ptr<bool> alive = alive_;
  auto guard = guard_;
  auto in = in_;
  boost::asio::async_read_until(*guard, *in, '\n', [this, alive, guard, in](const boost::system::error_code& ec, std::size_t n) {
    if (ec || alive.expired() || guard != guard_) return;  // the program ended, or disarmed
    std::string line(boost::asio::buffers_begin(in->data()), boost::asio::buffers_begin(in->data()) + static_cast<std::ptrdiff_t>(n));
    in->consume(n);
    if (auto crash = parseCrashLine(line)) {
      crash->pid = pid_;
      onCrash_(*crash);
    }
    readLine();
  });
}

void CrashWatch::release() {
  if (!guard_) return;
  static const char go = 'g';
  boost::system::error_code ignored;
  boost::asio::write(*guard_, boost::asio::buffer(&go, 1), ignored);
}

}  // namespace strata::backends
