// The CLI's DAP client.
#include "adapter/cli/dap_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

extern char** environ;

namespace strata::cli {

std::string siblingAdapter() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto candidate = self.parent_path() / "strata-dap";
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
    candidate = self.parent_path().parent_path() / "strata-dap";
    if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return "strata-dap";
}

DapClient::~DapClient() {
  if (connection_) connection_->close();
  connection_.reset();
  if (pid_ > 0) {
    // The adapter ends when its stdin closes; give it a moment, then make sure.
    int status;
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) != 0) return;
      ::usleep(10000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
  }
}

Result<void> DapClient::spawn(const std::string& adapter) {
  int toAdapter[2], fromAdapter[2];
  if (::pipe2(toAdapter, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "pipe");
  if (::pipe2(fromAdapter, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, toAdapter[0], 0);
  posix_spawn_file_actions_adddup2(&actions, fromAdapter[1], 1);
  char* argv[] = {const_cast<char*>(adapter.c_str()), const_cast<char*>("--stdio"), nullptr};
  int rc = adapter.find('/') == std::string::npos
               ? ::posix_spawnp(&pid_, adapter.c_str(), &actions, nullptr, argv, environ)
               : ::posix_spawn(&pid_, adapter.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(toAdapter[0]);
  ::close(fromAdapter[1]);
  if (rc != 0) {
    ::close(toAdapter[1]);
    ::close(fromAdapter[0]);
    pid_ = -1;
    return errnoError(errors::kSystemCallFailed, "cannot start the adapter '" + adapter + "'", rc);
  }
  start(protocol::makeDescriptorStream(io_, fromAdapter[0], toAdapter[1], "adapter"));
  return {};
}

Result<void> DapClient::connect(const std::string& hostPort, const std::string& token) {
  auto where = protocol::parseHostPort(hostPort);
  if (!where) return where.takeError();
  auto socket = protocol::dial(io_, *where);
  if (!socket) return socket.takeError();
  if (!token.empty()) {
    std::string line = "STRATA-TOKEN " + token + "\r\n";
    boost::system::error_code ec;
    asio::write(*socket, asio::buffer(line), ec);
    if (ec) return Error{errors::kConnectFailed, "cannot send the token: " + ec.message(), true};
  }
  start(protocol::makeSocketStream(std::move(*socket)));
  return {};
}

void DapClient::start(std::unique_ptr<protocol::ByteStream> stream) {
  connection_ = std::make_shared<protocol::Connection>(std::move(stream));
  connection_->start(protocol::Connection::Callbacks{
      [this](std::string body) { onFrame(std::move(body)); },
      [](const std::string&) {},
      [this] {
        if (onClosed_) std::exchange(onClosed_, {})();
      }});
}

void DapClient::request(const std::string& command, json::value arguments, ResponseHandler h) {
  std::int64_t seq = nextSeq_++;
  pending_[seq] = std::move(h);
  connection_->send(protocol::serialize(protocol::toJson(protocol::Request{seq, command, std::move(arguments)})));
}

void DapClient::close() {
  if (connection_) connection_->close();
}

void DapClient::onFrame(std::string body) {
  auto parsed = protocol::parseMessage(body);
  auto* message = std::get_if<protocol::Message>(&parsed);
  if (!message) return;
  if (auto* r = std::get_if<protocol::Response>(message)) {
    auto it = pending_.find(r->request_seq);
    if (it == pending_.end()) return;
    auto h = std::move(it->second);
    pending_.erase(it);
    if (h) h(*r);
  } else if (auto* e = std::get_if<protocol::Event>(message)) {
    if (onEvent_) onEvent_(*e);
  } else if (auto* q = std::get_if<protocol::Request>(message)) {
    // Reverse requests: startDebugging where the caller takes it; the rest (runInTerminal) is
    // refused politely.
    std::weak_ptr<protocol::Connection> connection = connection_;
    auto respond = [this, connection, seq = q->seq, command = q->command](std::optional<std::string> error) {
      auto c = connection.lock();
      if (!c) return;
      protocol::Response r{nextSeq_++, seq, !error, command, error, json::value()};
      if (error) r.body = protocol::errorBody(Error{errors::kUnsupportedRequest, *error, false});
      c->send(protocol::serialize(protocol::toJson(r)));
    };
    if (onReverse_ && q->command == "startDebugging") return onReverse_(*q, respond);
    respond(std::string("not supported by the strata CLI"));
  }
}

}  // namespace strata::cli
