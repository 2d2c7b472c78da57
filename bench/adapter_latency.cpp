// adapter_latency: strata-dap's start-up and request round-trip latency over stdio and TCP,
// each next to a plain echo peer over the same transport, printed as a table. The round trips
// are `threads` in an initialized session with no program launched (no debuggee).
//
// The echo is this same binary (--echo): it frames back every body it receives with
// protocol/ framing, so the baseline pays for process start, pipes or sockets and framing,
// but not for a session. The client is blocking and minimal so it adds as little as possible
// to either side. No thresholds: the numbers are for reading, not for failing.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "strata/protocol/framing.hpp"
#include "strata/protocol/messages.hpp"
#include "strata/result.hpp"

extern char** environ;

namespace {

using namespace strata;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr int kReplyTimeoutMs = 10000;  // a peer that stays silent this long is broken

// ---- the echo peer ------------------------------------------------------------------------

Result<void> writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errnoError(errors::kSystemCallFailed, "write");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// Frames every body back until the peer closes. Returns an error only for I/O failures or
// framing errors; end of stream is the normal way out.
Result<void> echoFrames(int in, int out) {
  protocol::FrameDecoder decoder;
  std::vector<char> buffer(64 * 1024);
  for (;;) {
    ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errnoError(errors::kSystemCallFailed, "read");
    if (n == 0) return {};
    decoder.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    std::string body, replies;
    for (;;) {
      auto status = decoder.next(body);
      if (status == protocol::FrameDecoder::Status::NeedMore) break;
      if (status == protocol::FrameDecoder::Status::Error) return Error{errors::kMalformedMessage, "framing: " + body, false};
      replies += protocol::encodeFrame(body);
    }
    if (!replies.empty())
      if (auto w = writeAll(out, replies); !w) return w;
  }
}

Result<sockaddr_in> parseIpv4(const std::string& hostPort) {
  auto colon = hostPort.rfind(':');
  if (colon == std::string::npos) return Error{errors::kBadAddress, "expected HOST:PORT, got '" + hostPort + "'", true};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  std::string host = hostPort.substr(0, colon);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    return Error{errors::kBadAddress, "not an IPv4 address: '" + host + "'", true};
  char* end = nullptr;
  long port = std::strtol(hostPort.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 0 || port > 65535) return Error{errors::kBadAddress, "bad port in '" + hostPort + "'", true};
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  return addr;
}

Result<void> setNoDelay(int fd) {
  int one = 1;
  // Without it, Nagle and delayed ACKs add tens of milliseconds to every small round trip.
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) return errnoError(errors::kSystemCallFailed, "setsockopt TCP_NODELAY");
  return {};
}

// Like strata-dap --listen: prints "listening on HOST:PORT", then serves connections one
// after another until killed.
Result<void> echoListen(const std::string& hostPort) {
  auto addr = parseIpv4(hostPort);
  if (!addr) return addr.takeError();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoError(errors::kSystemCallFailed, "socket");
  int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) return errnoError(errors::kSystemCallFailed, "setsockopt SO_REUSEADDR");
  if (::bind(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) return errnoError(errors::kListenFailed, "bind " + hostPort);
  if (::listen(fd, 16) != 0) return errnoError(errors::kListenFailed, "listen");
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) return errnoError(errors::kSystemCallFailed, "getsockname");
  char host[INET_ADDRSTRLEN];
  if (!::inet_ntop(AF_INET, &bound.sin_addr, host, sizeof host)) return errnoError(errors::kSystemCallFailed, "inet_ntop");
  if (std::printf("listening on %s:%u\n", host, static_cast<unsigned>(ntohs(bound.sin_port))) < 0 ||
      std::fflush(stdout) != 0)
    return errnoError(errors::kSystemCallFailed, "write stdout");
  for (;;) {
    int peer = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0 && errno == EINTR) continue;
    if (peer < 0) return errnoError(errors::kSystemCallFailed, "accept");
    auto r = setNoDelay(peer);
    if (r) r = echoFrames(peer, peer);
    if (!r) std::fprintf(stderr, "adapter_latency --echo: %s\n", r.error().message.c_str());
    if (::close(peer) != 0) return errnoError(errors::kSystemCallFailed, "close");
  }
}

// ---- the client side ----------------------------------------------------------------------

// One peer process and the framed byte pipe to it (two pipes, or one socket twice).
struct Peer {
  pid_t pid = -1;
  int in = -1, out = -1;   // we read `in` and write `out`
  int listenerStdout = -1;  // kept open so the peer never writes into a closed pipe
  protocol::FrameDecoder decoder;
  std::int64_t seq = 0;
};

Result<void> closeFd(int& fd) {
  if (fd < 0) return {};
  int r = ::close(fd);
  fd = -1;
  if (r != 0) return errnoError(errors::kSystemCallFailed, "close");
  return {};
}

Result<pid_t> spawnWith(const std::vector<std::string>& args, int stdinFd, int stdoutFd) {
  posix_spawn_file_actions_t actions;
  if (int rc = posix_spawn_file_actions_init(&actions); rc != 0) return errnoError(errors::kSystemCallFailed, "posix_spawn_file_actions_init", rc);
  int rc = 0;
  if (stdinFd >= 0 && rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, stdinFd, 0);
  if (stdoutFd >= 0 && rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, stdoutFd, 1);
  if (rc != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return errnoError(errors::kSystemCallFailed, "posix_spawn_file_actions_adddup2", rc);
  }
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return errnoError(errors::kSystemCallFailed, "cannot start " + args[0], rc);
  return pid;
}

// The peer serves DAP on its stdin/stdout.
Result<void> startStdio(Peer& p, const std::vector<std::string>& args) {
  int toPeer[2], fromPeer[2];
  if (::pipe2(toPeer, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "pipe");
  p.out = toPeer[1];  // from here on stop() closes what was opened, whatever fails next
  if (::pipe2(fromPeer, O_CLOEXEC) != 0) {
    Error e = errnoError(errors::kSystemCallFailed, "pipe");
    (void)closeFd(toPeer[0]);
    return e;
  }
  auto pid = spawnWith(args, toPeer[0], fromPeer[1]);
  int childIn = toPeer[0], childOut = fromPeer[1];
  if (auto c = closeFd(childIn); !c) return c;
  if (auto c = closeFd(childOut); !c) return c;
  p.in = fromPeer[0];
  if (!pid) return pid.takeError();
  p.pid = *pid;
  return {};
}

Result<std::string> readLine(int fd) {
  std::string line;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, kReplyTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errnoError(errors::kSystemCallFailed, "poll");
    if (r == 0) return Error{errors::kTimedOut, "no 'listening on' line within 10 s", true};
    char c;
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errnoError(errors::kSystemCallFailed, "read");
    if (n == 0) return Error{errors::kPeerGone, "the listener exited before saying where it listens", true};
    if (c == '\n') return line;
    line += c;
  }
}

// The peer listens (port 0) and announces "listening on HOST:PORT"; we dial it.
Result<void> startListener(Peer& p, const std::vector<std::string>& args) {
  int fromPeer[2];
  if (::pipe2(fromPeer, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "pipe");
  auto pid = spawnWith(args, -1, fromPeer[1]);
  int childOut = fromPeer[1];
  if (auto c = closeFd(childOut); !c) return c;
  p.listenerStdout = fromPeer[0];
  if (!pid) return pid.takeError();
  p.pid = *pid;
  auto line = readLine(p.listenerStdout);
  if (!line) return line.takeError();
  const std::string prefix = "listening on ";
  if (line->rfind(prefix, 0) != 0) return Error{errors::kUnexpectedReply, "unexpected first line: '" + *line + "'", true};
  auto addr = parseIpv4(line->substr(prefix.size()));
  if (!addr) return addr.takeError();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errnoError(errors::kSystemCallFailed, "socket");
  p.in = p.out = fd;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) return errnoError(errors::kConnectFailed, "connect " + *line);
  return setNoDelay(fd);
}

// Closes our ends (a stdio peer exits on end of input) and reaps the peer; a listener is
// told to stop with SIGTERM.
Result<void> stop(Peer& p) {
  bool listener = p.listenerStdout >= 0;
  Result<void> result;
  if (p.in == p.out) p.out = -1;
  for (int* fd : {&p.out, &p.in, &p.listenerStdout})
    if (auto c = closeFd(*fd); !c && result) result = c;
  if (p.pid <= 0) return result;
  if (listener && ::kill(p.pid, SIGTERM) != 0 && result) result = errnoError(errors::kSystemCallFailed, "kill");
  int status = 0;
  auto deadline = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    pid_t r = ::waitpid(p.pid, &status, WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errnoError(errors::kSystemCallFailed, "waitpid");
    if (r == p.pid) break;
    if (Clock::now() > deadline) {
      if (::kill(p.pid, SIGKILL) != 0) return errnoError(errors::kSystemCallFailed, "kill");
      if (::waitpid(p.pid, &status, 0) < 0) return errnoError(errors::kSystemCallFailed, "waitpid");
      if (result) result = Error{errors::kTimedOut, "the peer did not exit within 5 s", true};
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  p.pid = -1;
  return result;
}

Result<std::string> receiveFrame(Peer& p) {
  std::string body;
  char buffer[64 * 1024];
  for (;;) {
    auto status = p.decoder.next(body);
    if (status == protocol::FrameDecoder::Status::Frame) return body;
    if (status == protocol::FrameDecoder::Status::Error) return Error{errors::kMalformedMessage, "framing: " + body, true};
    pollfd pfd{p.in, POLLIN, 0};
    int r = ::poll(&pfd, 1, kReplyTimeoutMs);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return errnoError(errors::kSystemCallFailed, "poll");
    if (r == 0) return Error{errors::kTimedOut, "no reply within 10 s", true};
    ssize_t n = ::read(p.in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errnoError(errors::kSystemCallFailed, "read");
    if (n == 0) return Error{errors::kPeerGone, "the peer closed the connection", true};
    p.decoder.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  }
}

// Sends one request and waits for its answer: strata-dap's response, or the echo of the
// request itself. Events (strata-dap's `initialized`) are skipped. Both sides pay for the
// same parse, so the comparison is of the peers alone.
Result<void> roundTrip(Peer& p, const std::string& command, const protocol::json::value& arguments) {
  std::int64_t seq = ++p.seq;
  std::string body = protocol::serialize(protocol::toJson(protocol::Request{seq, command, arguments}));
  if (auto w = writeAll(p.out, protocol::encodeFrame(body)); !w) return w;
  for (;;) {
    auto frame = receiveFrame(p);
    if (!frame) return frame.takeError();
    auto parsed = protocol::parseMessage(*frame);
    auto* message = std::get_if<protocol::Message>(&parsed);
    if (!message) return Error{errors::kMalformedMessage, "unparsable reply: " + std::get<protocol::ParseFailure>(parsed).error.message, true};
    if (auto* r = std::get_if<protocol::Response>(message); r && r->request_seq == seq) {
      if (!r->success) return Error{errors::kUnexpectedReply, command + " failed: " + r->message.value_or("(no message)"), true};
      return {};
    }
    if (auto* q = std::get_if<protocol::Request>(message); q && q->seq == seq && q->command == command) return {};
    if (std::holds_alternative<protocol::Event>(*message)) continue;
    return Error{errors::kUnexpectedReply, "unexpected reply: " + *frame, true};
  }
}

const protocol::json::value& initializeArguments() {
  static const protocol::json::value args = {
      {"clientID", "adapter_latency"}, {"adapterID", "strata"}, {"linesStartAt1", true},
      {"columnsStartAt1", true},       {"pathFormat", "path"}};
  return args;
}

// ---- measurements -------------------------------------------------------------------------

enum class Transport { Stdio, Tcp };

struct Target {
  const char* name;
  std::vector<std::string> stdioArgs, listenArgs;
};

Result<void> start(Peer& p, const Target& t, Transport transport) {
  return transport == Transport::Stdio ? startStdio(p, t.stdioArgs) : startListener(p, t.listenArgs);
}

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// From spawning the peer to holding the initialize response.
Result<double> startUp(const Target& t) {
  Peer p;
  auto t0 = Clock::now();
  auto r = startStdio(p, t.stdioArgs);
  if (r) r = roundTrip(p, "initialize", initializeArguments());
  double ms = msSince(t0);
  auto s = stop(p);
  if (!r) return r.takeError();
  if (!s) return s.takeError();
  return ms;
}

// Mean time of one `threads` round trip over `n` sequential requests, in microseconds.
Result<double> threadsRound(Peer& p, int n) {
  static const protocol::json::value noArguments;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    if (auto r = roundTrip(p, "threads", noArguments); !r) return r.takeError();
  return msSince(t0) * 1000.0 / n;
}

struct Stats {
  double min = 0, median = 0;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return {v.front(), v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2};
}

struct Row {
  std::string measurement;
  double strata, echo;
  int decimals;
};

// Markdown, so the README's table is this output as printed.
void printTable(const std::vector<Row>& rows) {
  std::printf("| measurement | strata-dap | echo baseline | ratio |\n| --- | ---: | ---: | ---: |\n");
  for (const auto& r : rows)
    std::printf("| %s | %.*f | %.*f | %.2f× |\n", r.measurement.c_str(), r.decimals, r.strata, r.decimals, r.echo,
                r.echo > 0 ? r.strata / r.echo : 0.0);
}

struct Options {
  std::string adapter;
  int rounds = 7;
  int requests = 2000;
};

Result<std::string> findAdapter(const std::string& self) {
  std::error_code ec;
  fs::path dir = fs::path(self).parent_path();
  // build/<preset>/bench/adapter_latency -> build/<preset>/adapter/strata-dap
  for (const fs::path& candidate : {dir / "strata-dap", dir.parent_path() / "adapter" / "strata-dap"})
    if (fs::exists(candidate, ec)) return fs::absolute(candidate, ec).string();
  return Error{errors::kProgramNotFound, "strata-dap not found next to " + self + "; pass --adapter PATH", true};
}

Result<void> runBenchmark(const Options& o, const std::string& self) {
  Target strata{"strata-dap", {o.adapter, "--stdio"}, {o.adapter, "--listen", "127.0.0.1:0"}};
  Target echo{"echo", {self, "--echo"}, {self, "--echo", "--listen", "127.0.0.1:0"}};
  std::vector<Row> rows;

  // Alternating the two peers round by round spreads any drift of the machine over both.
  std::vector<double> up[2];
  for (int i = 0; i < o.rounds + 1; ++i) {
    for (int k = 0; k < 2; ++k) {
      auto ms = startUp(k == 0 ? strata : echo);
      if (!ms) return ms.takeError();
      if (i > 0) up[k].push_back(*ms);  // the first round only warms the page cache
    }
  }
  Stats su[2] = {stats(up[0]), stats(up[1])};
  rows.push_back({"start-up to `initialize` response, min (ms)", su[0].min, su[1].min, 2});
  rows.push_back({"start-up to `initialize` response, median (ms)", su[0].median, su[1].median, 2});

  for (Transport transport : {Transport::Stdio, Transport::Tcp}) {
    const char* label = transport == Transport::Stdio ? "stdio" : "tcp";
    Peer peers[2];
    std::vector<double> rt[2];
    Result<void> r;
    for (int k = 0; k < 2 && r; ++k) {
      r = start(peers[k], k == 0 ? strata : echo, transport);
      if (r) r = roundTrip(peers[k], "initialize", initializeArguments());
      if (!r) break;
      // A short unmeasured round first: page faults and the first allocations are start-up cost.
      if (auto warm = threadsRound(peers[k], std::max(1, o.requests / 10)); !warm) r = warm.takeError();
    }
    for (int i = 0; i < o.rounds && r; ++i) {
      for (int k = 0; k < 2 && r; ++k) {
        auto us = threadsRound(peers[k], o.requests);
        if (!us) r = us.takeError();
        else rt[k].push_back(*us);
      }
    }
    for (auto& p : peers)
      if (auto s = stop(p); !s && r) r = s;
    if (!r) return Error{r.error().id, std::string(label) + ": " + r.error().message, true};
    Stats s[2] = {stats(rt[0]), stats(rt[1])};
    std::string n = std::to_string(o.requests);
    // No program is launched: the adapter answers `threads` from an empty session, so these rows
    // are its own request path and transport, not a debugger's.
    rows.push_back({std::string(label) + ": `threads` round trip, no debuggee, min (µs)", s[0].min, s[1].min, 1});
    rows.push_back({std::string(label) + ": `threads` round trip, no debuggee, median (µs)", s[0].median, s[1].median, 1});
    rows.push_back({std::string(label) + ": `threads` round trips/s, no debuggee, median round", 1e6 / s[0].median,
                    1e6 / s[1].median, 0});
  }

  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = -1;
  std::printf(
      "adapter_latency: %s vs echo; %d rounds each (min, median); %d sequential `threads` requests per round,\n"
      "in an initialized session with no program launched (no debuggee); load average %.2f %.2f %.2f\n\n",
      o.adapter.c_str(), o.rounds, o.requests, load[0], load[1], load[2]);
  printTable(rows);
  return {};
}

constexpr const char* kUsage = R"(usage: adapter_latency [--adapter PATH] [--rounds N] [--requests N]
       adapter_latency --echo [--listen IPV4:PORT]

Measures strata-dap's start-up to the initialize response and the round trips per second of
`threads` over stdio and TCP, each next to an echo peer over the same transport. The `threads`
requests go to an initialized session with no program launched: the adapter's own request
path, without a debuggee. PATH defaults to the strata-dap of the same build tree. --echo is
that peer: it frames back what it receives.
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "adapter_latency: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer that dies mid-write must become an error message, not a silent SIGPIPE death.
  if (::signal(SIGPIPE, SIG_IGN) == SIG_ERR) return fail(std::string("signal: ") + std::strerror(errno));

  Options o;
  bool echo = false;
  std::string listen;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        fail(std::string(name) + " needs a value");
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](const char* name) {
      const char* v = value(name);
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end != '\0' || n < 1 || n > 1000000) {
        fail(std::string(name) + " needs a positive number, got '" + v + "'");
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--echo") echo = true;
    else if (a == "--listen") listen = value("--listen");
    else if (a == "--adapter") o.adapter = value("--adapter");
    else if (a == "--rounds") o.rounds = std::max(5, number("--rounds"));
    else if (a == "--requests") o.requests = number("--requests");
    else if (a == "--help" || a == "-h") return std::fputs(kUsage, stdout) < 0 ? 1 : 0;
    else return fail("unknown argument '" + a + "' (see --help)");
  }

  if (echo) {
    auto r = listen.empty() ? echoFrames(0, 1) : echoListen(listen);
    return r ? 0 : fail(r.error().message);
  }

  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fail("readlink /proc/self/exe: " + ec.message());
  if (o.adapter.empty()) {
    auto found = findAdapter(self.string());
    if (!found) return fail(found.error().message);
    o.adapter = *found;
  }
  if (::access(o.adapter.c_str(), X_OK) != 0) return fail(o.adapter + ": " + std::strerror(errno));
  auto r = runBenchmark(o, self.string());
  return r ? 0 : fail(r.error().message);
}
