// What a composite backend (the ranks of a job) asks of a Python process's agent beyond the
// Backend interface, as typed calls: the agent's wire protocol stays in python/proxy.
#pragma once

#include <boost/asio.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "backends/model.hpp"

namespace strata::backends {

// What the agent says of its process (its strataProcess request).
struct ProcessFacts {
  std::optional<std::int64_t> pid;   // as the process sees itself (another node's, or a container's)
  std::optional<std::int64_t> rank;  // the rank it gives itself now (RANK, OMPI_COMM_WORLD_RANK, ...)
  std::string host;                  // the node it runs on, when it says
};

class AgentProcess {
 public:
  virtual ~AgentProcess() = default;
  // An error when no agent is connected (yet).
  virtual void processFacts(Reply<ProcessFacts> reply) = 0;
};

// A process that dialed a ranks listener and is no rank (a DataLoader worker): over that
// connection, asks its agent to serve a session of its own, with `token`; answers the port
// that session is to connect to. The connection is closed afterwards.
void requestHandover(boost::asio::ip::tcp::socket socket, const std::string& token, Reply<std::int64_t> reply);

}  // namespace strata::backends
