// Peer identification through /proc (Linux): socket inode from /proc/net/tcp{,6}, owner from
// the fd tables of the user's processes.
#include "backends/python/proxy/peer_check.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

namespace strata::backends {

std::string makeLaunchToken() {
  std::random_device rd;
  std::string out;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    out += buf;
  }
  return out;
}

namespace {

// The inode of the socket whose local port is `localPort` and remote port `remotePort`.
std::optional<unsigned long> socketInode(const char* table, unsigned localPort, unsigned remotePort) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string sl, local, remote, st, queues, timer, retr, uid, timeout;
    unsigned long inode = 0;
    if (!(ss >> sl >> local >> remote >> st >> queues >> timer >> retr >> uid >> timeout >> inode)) continue;
    auto port = [](const std::string& endpoint) {
      auto colon = endpoint.rfind(':');
      return colon == std::string::npos ? 0u : static_cast<unsigned>(std::stoul(endpoint.substr(colon + 1), nullptr, 16));
    };
    if (port(local) == localPort && port(remote) == remotePort && inode != 0) return inode;
  }
  return std::nullopt;
}

}  // namespace

Result<int> loopbackPeerPid(const boost::asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) return Error{errors::kPeerUnverified, "cannot read the peer address: " + ec.message(), false};
  auto local = socket.local_endpoint(ec);
  if (ec) return Error{errors::kPeerUnverified, "cannot read the local address: " + ec.message(), false};
  auto inode = socketInode("/proc/net/tcp", peer.port(), local.port());
  if (!inode) inode = socketInode("/proc/net/tcp6", peer.port(), local.port());
  if (!inode) return Error{errors::kPeerUnverified, "the peer's socket is not in /proc/net/tcp", false};
  std::string wanted = "socket:[" + std::to_string(*inode) + "]";
  DIR* proc = ::opendir("/proc");
  if (!proc) return errnoError(errors::kSystemCallFailed, "opendir /proc");
  std::optional<int> found;
  while (dirent* e = ::readdir(proc)) {
    if (found) break;
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::string fdDir = std::string("/proc/") + e->d_name + "/fd";
    DIR* fds = ::opendir(fdDir.c_str());
    if (!fds) continue;  // another user's process: it cannot be ours
    while (dirent* f = ::readdir(fds)) {
      char target[64];
      std::string link = fdDir + "/" + f->d_name;
      ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      if (wanted == target) {
        found = static_cast<int>(pid);
        break;
      }
    }
    ::closedir(fds);
  }
  ::closedir(proc);
  if (!found) return Error{errors::kPeerUnverified, "no process of this user holds the peer's socket", false};
  return *found;
}

bool processEnvironmentHas(int pid, const std::string& entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string item;
  while (std::getline(in, item, '\0'))
    if (item == entry) return true;
  return false;
}

std::int64_t parentProcess(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string stat = text.str();
  auto close = stat.rfind(')');  // the command name in parentheses may hold anything
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  std::int64_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

namespace {
bool helperCommand(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string arg;
  while (std::getline(in, arg, '\0'))
    if (arg.find("multiprocessing.resource_tracker") != std::string::npos ||
        arg.find("multiprocessing.forkserver") != std::string::npos)
      return true;
  return false;
}
}  // namespace

bool multiprocessingHelper(std::int64_t pid) {
  // The workers a forkserver forks carry its command line: they are no helpers.
  return helperCommand(pid) && !helperCommand(parentProcess(pid));
}

bool processOwnedByUs(int pid) {
  struct stat st {};
  std::string path = "/proc/" + std::to_string(pid);
  return ::stat(path.c_str(), &st) == 0 && st.st_uid == ::geteuid();
}

namespace {

struct TokenLine : std::enable_shared_from_this<TokenLine> {
  TokenLine(boost::asio::ip::tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
  boost::asio::ip::tcp::socket socket;
  boost::asio::steady_timer timer;
  std::string line, want;
  char byte = 0;
  std::function<void(boost::asio::ip::tcp::socket)> done;

  void next() {
    auto self = shared_from_this();
    // One byte at a time: what follows the line is the link's, not ours.
    boost::asio::async_read(socket, boost::asio::buffer(&byte, 1),
                            [self](const boost::system::error_code& ec, std::size_t) {
                              if (ec) return self->drop();
                              if (self->byte == '\n') return self->check();
                              self->line += self->byte;
                              if (self->line.size() > 512) return self->drop();
                              self->next();
                            });
  }
  void check() {
    timer.cancel();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    unsigned diff = static_cast<unsigned>(line.size() ^ want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      diff |= static_cast<unsigned>(want[i] ^ (i < line.size() ? line[i] : 0));
    if (diff != 0) return drop();
    if (auto d = std::exchange(done, {})) d(std::move(socket));
  }
  void drop() {
    timer.cancel();
    done = {};
    boost::system::error_code ec;
    socket.close(ec);
  }
};

}  // namespace

void expectTokenLine(boost::asio::ip::tcp::socket socket, const std::string& token,
                     std::function<void(boost::asio::ip::tcp::socket)> done) {
  auto t = std::make_shared<TokenLine>(std::move(socket));
  t->want = "STRATA-TOKEN " + token;
  t->done = std::move(done);
  t->timer.expires_after(std::chrono::seconds(5));
  t->timer.async_wait([t](const boost::system::error_code& ec) {
    if (!ec) t->drop();
  });
  t->next();
}

Result<std::unique_ptr<protocol::Listener>> listenForToken(boost::asio::io_context& io, const std::string& token,
                                                           std::weak_ptr<bool> alive,
                                                           std::function<void(boost::asio::ip::tcp::socket, int pid)> onPeer) {
  auto peer = std::make_shared<std::function<void(boost::asio::ip::tcp::socket, int)>>(std::move(onPeer));
  return protocol::Listener::open(io, protocol::HostPort{"127.0.0.1", 0}, [token, alive, peer](boost::asio::ip::tcp::socket s) {
    if (alive.expired()) return;
    expectTokenLine(std::move(s), token, [alive, peer](boost::asio::ip::tcp::socket checked) {
      if (alive.expired()) return;
      auto pid = loopbackPeerPid(checked);
      if (pid) (*peer)(std::move(checked), *pid);
    });
  });
}

}  // namespace strata::backends
