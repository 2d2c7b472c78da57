// Peer identification for the Python launch link: who holds the other end of a loopback
// connection, and whether its environment carries the launch token.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>

#include "backends/python/proxy/peer_check.hpp"

using namespace strata;
namespace asio = boost::asio;
using asio::ip::tcp;

TEST_CASE("the peer of a loopback connection made by this process is this process") {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  tcp::socket accepted = acceptor.accept();
  auto pid = backends::loopbackPeerPid(accepted);
  REQUIRE(pid.ok());
  CHECK(*pid == ::getpid());
}

TEST_CASE("environment entries are matched exactly") {
  const char* path = std::getenv("PATH");
  REQUIRE(path);
  CHECK(backends::processEnvironmentHas(::getpid(), std::string("PATH=") + path));
  CHECK_FALSE(backends::processEnvironmentHas(::getpid(), std::string("PATH=") + path + "x"));
  CHECK_FALSE(backends::processEnvironmentHas(::getpid(), "STRATA_NO_SUCH_VARIABLE=1"));
  CHECK_FALSE(backends::processEnvironmentHas(999999999, "PATH=/bin"));
}

TEST_CASE("launch tokens are long and differ") {
  auto a = backends::makeLaunchToken(), b = backends::makeLaunchToken();
  CHECK(a.size() == 32);
  CHECK(a != b);
}
