// The child sessions of `strata run --break`: the adapter asks (startDebugging) for a session
// of each Python process started under the program (a DataLoader worker, a multiprocessing
// Pool's, a subprocess); each gets a strata-dap of its own with the same breakpoints, and its
// stops are printed as the program's are, named by the process.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "adapter/cli/dap_client.hpp"
#include "adapter/cli/stops.hpp"

namespace strata::cli {

class ChildRuns {
 public:
  struct Options {
    std::string adapter;  // the strata-dap to start for each
    std::vector<BreakSpec> breaks;
    bool json = false;
    std::function<void(const std::string& category, const std::string& text)> output;
  };
  ChildRuns(asio::io_context& io, Options options) : io_(io), options_(std::move(options)) {}

  // Takes the startDebugging requests of `client`'s adapter.
  void serve(DapClient& client);
  // How many child sessions were started, and how many are still on.
  std::size_t started() const { return children_.size(); }
  std::size_t running() const;

 private:
  struct Child {
    std::unique_ptr<DapClient> client;
    std::string name;
    bool over = false;
  };
  void start(const boost::json::object& configuration, DapClient::Respond respond);
  void onEvent(Child& child, const protocol::Event& e);

  asio::io_context& io_;
  Options options_;
  std::list<Child> children_;
};

}  // namespace strata::cli
