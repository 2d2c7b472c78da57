// Tells whether a loopback TCP peer is the program this adapter launched: the process that
// holds the peer's socket must carry the launch's token in its environment.
#pragma once

#include <boost/asio.hpp>

#include <string>

#include "strata/result.hpp"

namespace strata::backends {

// A fresh random token for one launch.
std::string makeLaunchToken();

// The pid holding the other end of a loopback connection accepted on `socket`.
Result<int> loopbackPeerPid(const boost::asio::ip::tcp::socket& socket);

// Whether /proc/PID/environ holds NAME=VALUE exactly.
bool processEnvironmentHas(int pid, const std::string& entry);

}  // namespace strata::backends
