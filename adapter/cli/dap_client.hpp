// A small DAP client on protocol/: starts or dials an adapter, sends requests with
// callbacks, hands events to the caller. The strata CLI and the benchmarks use it.
#pragma once

#include <boost/asio.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "strata/protocol/messages.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::cli {

namespace asio = boost::asio;
namespace json = boost::json;

class DapClient {
 public:
  using ResponseHandler = std::function<void(const protocol::Response&)>;
  using EventHandler = std::function<void(const protocol::Event&)>;

  explicit DapClient(asio::io_context& io) : io_(io) {}
  ~DapClient();

  // Starts `adapter --stdio` as a child process.
  Result<void> spawn(const std::string& adapter);
  // Dials an adapter that listens; sends the token line first when one is given.
  Result<void> connect(const std::string& hostPort, const std::string& token);

  void onEvent(EventHandler h) { onEvent_ = std::move(h); }
  void onClosed(std::function<void()> h) { onClosed_ = std::move(h); }
  // Reverse requests (startDebugging): the handler answers each through `respond` (an error
  // message, or none for success). Without a handler they are refused.
  using Respond = std::function<void(std::optional<std::string> error)>;
  using ReverseHandler = std::function<void(const protocol::Request&, Respond respond)>;
  void onReverseRequest(ReverseHandler h) { onReverse_ = std::move(h); }
  void request(const std::string& command, json::value arguments, ResponseHandler h);
  void close();
  pid_t adapterPid() const { return pid_; }

 private:
  void start(std::unique_ptr<protocol::ByteStream> stream);
  void onFrame(std::string body);

  asio::io_context& io_;
  std::shared_ptr<protocol::Connection> connection_;
  std::int64_t nextSeq_ = 1;
  std::map<std::int64_t, ResponseHandler> pending_;
  EventHandler onEvent_;
  std::function<void()> onClosed_;
  ReverseHandler onReverse_;
  pid_t pid_ = -1;
};

// The strata-dap next to this executable (they are built and installed together).
std::string siblingAdapter();

}  // namespace strata::cli
