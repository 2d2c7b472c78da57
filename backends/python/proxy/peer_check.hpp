// Tells whether a loopback TCP peer is the program this adapter launched: the process that
// holds the peer's socket must carry the launch's token in its environment.
#pragma once

#include <boost/asio.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "strata/protocol/transport.hpp"
#include "strata/result.hpp"

namespace strata::backends {

// A fresh random token for one launch.
std::string makeLaunchToken();

// The pid holding the other end of a loopback connection accepted on `socket`.
Result<int> loopbackPeerPid(const boost::asio::ip::tcp::socket& socket);

// The parent of process PID as /proc says (0 when it is gone).
std::int64_t parentProcess(std::int64_t pid);

// multiprocessing's own helper processes (resource_tracker, forkserver), told by their command
// line (a forkserver's workers, which carry its command line, are none): nobody debugs them.
bool multiprocessingHelper(std::int64_t pid);

// Whether process PID runs as this process's effective user.
bool processOwnedByUs(int pid);

// Reads a peer's first line, which must be "STRATA-TOKEN <token>" (5 s, 512 bytes at most,
// compared in constant time); `done` gets the socket back on success, nothing otherwise.
void expectTokenLine(boost::asio::ip::tcp::socket socket, const std::string& token,
                     std::function<void(boost::asio::ip::tcp::socket)> done);

// A loopback port for processes of this machine that were given `token`: each connection that
// sends the token line first comes to `onPeer` with the pid holding its other end; others are
// closed. Nothing comes once `alive` has expired.
Result<std::unique_ptr<protocol::Listener>> listenForToken(boost::asio::io_context& io, const std::string& token,
                                                           std::weak_ptr<bool> alive,
                                                           std::function<void(boost::asio::ip::tcp::socket, int pid)> onPeer);

// Whether /proc/PID/environ holds NAME=VALUE exactly.
bool processEnvironmentHas(int pid, const std::string& entry);

}  // namespace strata::backends
