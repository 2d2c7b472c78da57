// The link to the in-target agent.
#include "backends/python/proxy/agent_link.hpp"

#include "strata/protocol/messages.hpp"

namespace strata::backends {

namespace json = boost::json;

std::shared_ptr<AgentLink> AgentLink::open(boost::asio::ip::tcp::socket socket, Callbacks callbacks) {
  auto connection = std::make_shared<protocol::Connection>(protocol::makeSocketStream(std::move(socket)));
  auto link = std::shared_ptr<AgentLink>(new AgentLink(connection));
  link->callbacks_ = std::move(callbacks);
  std::weak_ptr<AgentLink> weak = link;
  connection->start(protocol::Connection::Callbacks{
      [weak](std::string body) {
        if (auto l = weak.lock()) l->onFrame(body);
      },
      [](const std::string&) {},  // the connection closes itself right after
      [weak] {
        if (auto l = weak.lock()) l->onClosed();
      }});
  return link;
}

void AgentLink::request(const std::string& command, Body arguments, BodyReply reply) {
  if (closed_) return reply(Error{errors::kAgentLinkClosed, "the link to the Python program is closed", false});
  std::int64_t seq = nextSeq_++;
  pending_[seq] = std::move(reply);
  connection_->send(protocol::serialize(
      protocol::toJson(protocol::Request{seq, command, std::move(arguments)})));
}

void AgentLink::onFrame(const std::string& text) {
  auto parsed = protocol::parseMessage(text);
  auto* message = std::get_if<protocol::Message>(&parsed);
  if (!message) return;  // the agent is ours; a garbled message is dropped, not fatal
  if (auto* response = std::get_if<protocol::Response>(message)) {
    auto it = pending_.find(response->request_seq);
    if (it == pending_.end()) return;
    auto reply = std::move(it->second);
    pending_.erase(it);
    if (!response->success)
      return reply(Error{errors::kAgentRefused, response->message.value_or("the Python program refused the request"), false});
    return reply(std::move(response->body));
  }
  if (auto* event = std::get_if<protocol::Event>(message)) {
    // Keep ourselves alive: the owner may close and drop the link from inside the callback.
    auto self = shared_from_this();
    if (callbacks_.event) callbacks_.event(event->event, event->body);
  }
}

void AgentLink::close() {
  if (!closed_) connection_->close();
}

void AgentLink::onClosed() {
  if (closed_) return;
  closed_ = true;
  auto self = shared_from_this();
  for (auto& [seq, reply] : std::exchange(pending_, {}))
    reply(Error{errors::kAgentLinkClosed, "the Python program closed the debug link", false});
  if (auto cb = std::exchange(callbacks_.closed, {})) cb();
  callbacks_.event = {};
}

}  // namespace strata::backends
