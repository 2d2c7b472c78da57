// Token storage and the pre-DAP token check.
#include "adapter/token.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>

namespace strata::adapter {
namespace asio = boost::asio;

std::string defaultTokenPath(unsigned port) {
  std::string base;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) base = x;
  else if (const char* h = std::getenv("HOME"); h && *h) base = std::string(h) + "/.config";
  else base = "/tmp";
  return base + "/strata/token-" + std::to_string(port);
}

Result<std::string> loadToken(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoError(errors::kTokenFile, "cannot read token file " + path);
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf);
  int err = errno;
  ::close(fd);
  if (n < 0) return errnoError(errors::kTokenFile, "cannot read token file " + path, err);
  // The first line is the token; peers send it on one line, so nothing after it can count.
  std::string t(buf, static_cast<std::size_t>(n));
  t = t.substr(0, t.find('\n'));
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!t.empty() && space(t.back())) t.pop_back();
  while (!t.empty() && space(t.front())) t.erase(0, 1);
  if (t.empty()) return Error{errors::kTokenFile, "token file " + path + " has no token on its first line", true};
  if (t.size() > kMaxTokenLength)
    return Error{errors::kTokenFile, "the token in " + path + " is longer than " + std::to_string(kMaxTokenLength) + " characters",
                 true};
  return t;
}

Result<std::string> loadOrCreateToken(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0 || errno != ENOENT) return loadToken(path);
  std::error_code ec;
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Error{errors::kTokenFile, "cannot create " + dir.string() + ": " + ec.message(), true};
    ::chmod(dir.c_str(), 0700);
  }
  std::random_device rd;  // /dev/urandom
  static const char* hex = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) {
    unsigned v = rd() & 0xff;
    token += hex[v >> 4];
    token += hex[v & 15];
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return errnoError(errors::kTokenFile, "cannot create token file " + path);
  std::string line = token + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  int err = errno;
  ::close(fd);
  if (!ok) return errnoError(errors::kTokenFile, "cannot write token file " + path, err);
  return token;
}

namespace {

struct TokenCheck : std::enable_shared_from_this<TokenCheck> {
  TokenCheck(asio::io_context& io, asio::ip::tcp::socket s) : socket(std::move(s)), timer(io) {}
  asio::ip::tcp::socket socket;
  asio::steady_timer timer;
  std::string line;
  char byte = 0;
  std::string expected;
  std::function<void(asio::ip::tcp::socket)> accepted;

  void readByte() {
    auto self = shared_from_this();
    // One byte at a time: nothing past the token line may be consumed here.
    asio::async_read(socket, asio::buffer(&byte, 1), [self](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->reject();
      if (self->byte == '\n') return self->check();
      self->line += self->byte;
      if (self->line.size() > 512) return self->reject();
      self->readByte();
    });
  }
  void check() {
    timer.cancel();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string want = "STRATA-TOKEN " + expected;
    // Constant-time comparison: the time taken says nothing about how much matched.
    unsigned diff = static_cast<unsigned>(line.size() ^ want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      diff |= static_cast<unsigned>(want[i] ^ (i < line.size() ? line[i] : 0));
    if (diff != 0) return reject();
    accepted(std::move(socket));
  }
  void reject() {
    timer.cancel();
    boost::system::error_code ec;
    socket.close(ec);
  }
};

}  // namespace

void checkToken(asio::io_context& io, asio::ip::tcp::socket socket, const std::string& token,
                std::function<void(asio::ip::tcp::socket)> accepted) {
  auto check = std::make_shared<TokenCheck>(io, std::move(socket));
  check->expected = token;
  check->accepted = std::move(accepted);
  check->timer.expires_after(std::chrono::seconds(5));
  check->timer.async_wait([check](const boost::system::error_code& ec) {
    if (!ec) check->reject();
  });
  check->readByte();
}

}  // namespace strata::adapter
