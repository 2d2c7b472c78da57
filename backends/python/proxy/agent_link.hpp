// The adapter's end of the link to an in-target agent: DAP-shaped requests with callbacks,
// events handed to the owner, over one framed connection on the session's io_context.
#pragma once

#include <boost/asio.hpp>
#include <boost/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "strata/protocol/transport.hpp"
#include "strata/result.hpp"

namespace strata::backends {

class AgentLink : public std::enable_shared_from_this<AgentLink> {
 public:
  using Body = boost::json::value;
  using BodyReply = std::function<void(Result<Body>)>;
  struct Callbacks {
    std::function<void(const std::string& event, const Body& body)> event;
    std::function<void()> closed;  // once, after every pending request failed
  };

  static std::shared_ptr<AgentLink> open(boost::asio::ip::tcp::socket socket, Callbacks callbacks);
  void request(const std::string& command, Body arguments, BodyReply reply);
  void close();
  bool closed() const { return closed_; }

 private:
  explicit AgentLink(std::shared_ptr<protocol::Connection> c) : connection_(std::move(c)) {}
  void onFrame(const std::string& text);
  void onClosed();

  std::shared_ptr<protocol::Connection> connection_;
  Callbacks callbacks_;
  std::int64_t nextSeq_ = 1;
  std::map<std::int64_t, BodyReply> pending_;
  bool closed_ = false;
};

}  // namespace strata::backends
