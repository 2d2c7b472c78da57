// Child processes as child sessions (child_sessions.hpp).
#include "backends/python/proxy/child_sessions.hpp"

#include <boost/json.hpp>

#include "backends/python/proxy/agent_process.hpp"
#include "backends/python/proxy/peer_check.hpp"

namespace strata::backends {

namespace json = boost::json;
using boost::asio::ip::tcp;

void offerChildSession(BackendHost& host, std::weak_ptr<bool> alive, tcp::socket socket, std::int64_t pid,
                       const std::string& what, bool justMyCode) {
  if (!host.canStartDebugging()) {
    host.output(OutputCategory::Console, what + " runs without the debugger: this client opens no child sessions "
                                                "(startDebugging)\n");
    return;  // the socket closes: the agent lets the process run on
  }
  std::string childToken = makeLaunchToken();
  requestHandover(std::move(socket), childToken,
                  [&host, alive, pid, what, childToken, justMyCode](Result<std::int64_t> port) {
                    if (alive.expired()) return;
                    if (!port) {
                      host.output(OutputCategory::Console, what + " runs without the debugger: " + port.error().message + "\n");
                      return;
                    }
                    json::object config{{"type", "strata"},
                                        {"request", "attach"},
                                        {"name", what},
                                        {"connect", json::object{{"host", "127.0.0.1"}, {"port", *port}}},
                                        {"token", childToken},
                                        {"justMyCode", justMyCode},
                                        {"subProcessId", pid}};
                    host.startDebugging("attach", json::serialize(config), [&host, alive, what](Result<void> done) {
                      if (alive.expired() || done) return;
                      host.output(OutputCategory::Console, what + ": no child session: " + done.error().message + "\n");
                    });
                  });
}

ChildSessions::ChildSessions(boost::asio::io_context& io, BackendHost& host, bool justMyCode)
    : io_(io), host_(host), justMyCode_(justMyCode), token_(makeLaunchToken()) {}

ChildSessions::~ChildSessions() {
  *alive_ = false;
  if (listener_) listener_->close();
}

Result<void> ChildSessions::open() {
  // Only the processes under the debugged one: each sends the token it was given first.
  auto listener = listenForToken(io_, token_, alive_, [this](tcp::socket s, int pid) { onChild(std::move(s), pid); });
  if (!listener) return listener.takeError();
  listener_ = std::move(*listener);
  return {};
}

json::object ChildSessions::agentArguments() const {
  return {{"address", "127.0.0.1:" + std::to_string(listener_->endpoint().port())}, {"token", token_}};
}

void ChildSessions::onChild(tcp::socket socket, int pid) {
  if (multiprocessingHelper(pid)) return;  // the socket closes: it runs on undebugged
  std::string what = "process " + std::to_string(pid) + " (a child of " + std::to_string(parentProcess(pid)) + ")";
  if (!host_.canStartDebugging()) {
    // Said once: a DataLoader starts its workers again every epoch.
    if (!toldNoChildSessions_)
      host_.output(OutputCategory::Console, "Child processes run without the debugger (the first: " + what +
                                                "): this client opens no child sessions (startDebugging); "
                                                "\"subProcess\": false leaves them alone from the start\n");
    toldNoChildSessions_ = true;
    return;
  }
  offerChildSession(host_, alive_, std::move(socket), pid, what, justMyCode_);
}

}  // namespace strata::backends
