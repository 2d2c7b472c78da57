// The adapter's side of the agent's crash guard (agent/src/crash_guard.c): a loopback port the
// agent dials with a token when its session starts ("strataCrash"); at a fatal signal the
// guard sends one line (signal, code, address, thread) and waits for one byte back.
#pragma once

#include <boost/asio.hpp>
#include <boost/json.hpp>

#include <functional>
#include <memory>
#include <string>

#include "backends/model.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::backends {

class CrashWatch {
 public:
  CrashWatch(boost::asio::io_context& io, std::function<void(const CrashReport&)> onCrash);
  ~CrashWatch();
  CrashWatch(const CrashWatch&) = delete;
  CrashWatch& operator=(const CrashWatch&) = delete;

  Result<void> open();
  // What the agent is given: {"address", "token", "tracer": this process}.
  boost::json::object agentArguments() const;
  // Lets the crashed thread go on (its signal happens again).
  void release();

 private:
  void onGuard(boost::asio::ip::tcp::socket socket, int pid);
  void readLine();

  boost::asio::io_context& io_;
  std::function<void(const CrashReport&)> onCrash_;
  std::string token_;
  std::unique_ptr<protocol::Listener> listener_;
  std::shared_ptr<boost::asio::ip::tcp::socket> guard_;  // the agent's connection
  std::int64_t pid_ = 0;
  std::shared_ptr<boost::asio::streambuf> in_ = std::make_shared<boost::asio::streambuf>();
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// "STRATA-CRASH SIGNAL CODE 0xADDRESS TID" as the guard writes it, or nullopt.
std::optional<CrashReport> parseCrashLine(const std::string& line);

}  // namespace strata::backends
