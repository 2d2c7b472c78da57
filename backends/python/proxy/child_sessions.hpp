// The child processes of a debugged Python program as child sessions: launch and attach
// {"subProcess": true} (the default, as debugpy has it). The agent is given a loopback address
// and a token (the "subProcess" argument of its launch or attach request) and passes them on to
// every Python process started under it (fork, spawn, forkserver, subprocess); each one dials
// that address when it starts and is offered to the client through DAP's startDebugging as an
// attach of its own. The ranks of a job offer the children of their ranks the same way.
#pragma once

#include <boost/asio.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "backends/backend.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::backends {

// Process `pid`, which dialed in over `socket` and is not debugged in this session, gets a
// session of its own: its agent listens on loopback with a fresh token (strataHandover) and the
// client is asked to attach there (startDebugging), named `what`. A client that opens no child
// sessions, or an agent that cannot hand over, leaves the process running undebugged, said in
// the console. `host` must live while `alive` does.
void offerChildSession(BackendHost& host, std::weak_ptr<bool> alive, boost::asio::ip::tcp::socket socket,
                       std::int64_t pid, const std::string& what, bool justMyCode);

class ChildSessions {
 public:
  ChildSessions(boost::asio::io_context& io, BackendHost& host, bool justMyCode);
  ~ChildSessions();
  ChildSessions(const ChildSessions&) = delete;
  ChildSessions& operator=(const ChildSessions&) = delete;

  // Listens on loopback; the error says why not.
  Result<void> open();
  // What the agent passes on to its children: {"address": "127.0.0.1:PORT", "token": ...}.
  boost::json::object agentArguments() const;

 private:
  void onChild(boost::asio::ip::tcp::socket socket, int pid);

  boost::asio::io_context& io_;
  BackendHost& host_;
  bool justMyCode_;
  bool toldNoChildSessions_ = false;
  std::string token_;
  std::unique_ptr<protocol::Listener> listener_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
