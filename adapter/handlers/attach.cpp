// attach: to a native process by pid (ptrace), to a debuggee that waits for a debugger
// (`python -m strata --listen`), or listening for one that dials in (`python -m strata
// --connect`, arguments.listen).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

// debugpy's default port, so `attach {}` finds `python -m strata --listen 5678`.
constexpr std::int64_t kDefaultPort = 5678;

bool loopbackHost(const std::string& host) {
  boost::system::error_code ec;
  auto addr = boost::asio::ip::make_address(host, ec);
  return !ec ? protocol::isLoopback(addr) : host == "localhost";
}

class AttachHandler final : public TypedHandler<protocol::AttachRequestArguments> {
 public:
  std::string_view command() const override { return "attach"; }
  // An attach may wait a long time for a program to dial in (arguments.listen); the user may
  // give up on it, and then the port closes.
  bool cancellable() const override { return true; }
  void cancelled(Session& session) const override {
    if (auto* backend = session.backend()) backend->abandonStart();
  }

 protected:
  void run(Session& session, const protocol::AttachRequestArguments& args, Responder respond) override {
    if (auto busy = cannotStart(session)) return respond(std::move(*busy));
    auto bad = [&](const std::string& text) {
      respond(Error{errors::kBadArguments, "invalid 'attach' request: " + text, true});
    };
    if (args.listen && args.connect)
      return bad("give either arguments.connect (the program listens) or arguments.listen (Strata "
                 "listens and the program connects), not both");
    if (args.native.value_or(false) && args.processId.is_null())
      return bad("\"native\": true (mixed mode) attaches to a running Python program by arguments.processId");
    auto map = SourceMap::parse(args.sourceMap, "arguments.sourceMap");
    if (!map) return bad(map.error().message);
    session.setSourceMap(std::move(*map));
    backends::AttachSpec spec;
    spec.stopOnEntry = args.stopOnEntry.value_or(false);
    spec.native = args.native.value_or(false);
    spec.justMyCode = args.justMyCode.value_or(true);
    spec.subProcess = args.subProcess.value_or(true);
    if (args.processIds || args.processTree || args.nodes) return ranks(session, args, spec, respond);
    if (args.rankFilter || args.stopAll)
      return bad("arguments.rankFilter and .stopAll go with the ranks of a job (arguments.processIds, .processTree or .nodes)");
    if (!args.processId.is_null()) {
      // Native attach by pid: a number, or a string of digits (what "${command:pickProcess}" gives).
      auto pid = processId(args.processId);
      if (!pid) return respond(pid.takeError());
      spec.processId = *pid;
      return start(session, spec, respond);
    }
    spec.listen = args.listen.has_value();
    const char* field = spec.listen ? "arguments.listen.port" : "arguments.connect.port";
    std::int64_t port = args.port.value_or(kDefaultPort);
    if (args.host) spec.host = *args.host;
    if (const auto& where = spec.listen ? args.listen : args.connect) {
      if (where->host) spec.host = *where->host;
      if (where->port) port = *where->port;
    }
    // Port 0 when listening: any free port, announced in an output event.
    if (port < (spec.listen ? 0 : 1) || port > 65535)
      return bad(std::string(field) + ": " + std::to_string(port) + " is not a TCP port");
    if (spec.host.empty()) return bad("the host is empty");
    spec.port = static_cast<std::uint16_t>(port);
    if (args.token) spec.token = *args.token;
    if (spec.token.find_first_of("\r\n ") != std::string::npos)
      return bad("arguments.token: a token has no spaces or line breaks");
    if (spec.token.empty() && !loopbackHost(spec.host))
      return bad(spec.listen
                     ? "arguments.token is required to listen on " + spec.host +
                           ", which is not a loopback address (whoever reaches a debug port runs code "
                           "in the debuggee); start the program with python -m strata --connect " +
                           spec.host + ":" + std::to_string(port) + " --token TOKEN"
                     : "arguments.token is required to attach to " + spec.host +
                           ", which is not a loopback address: give the token the program was "
                           "started with (python -m strata --token or STRATA_TOKEN)");
    if (args.timeout) {
      if (*args.timeout < 1 || *args.timeout > 86400)
        return bad("arguments.timeout: " + std::to_string(*args.timeout) +
                   " is not a number of seconds between 1 and 86400");
      spec.timeoutSeconds = static_cast<int>(*args.timeout);
    }
    spec.justMyCode = args.justMyCode.value_or(true);
    spec.subProcess = args.subProcess.value_or(true);
    start(session, spec, respond);
  }

 private:
  // attach {"processIds"} / {"processTree"}: the ranks of a job, each brought in as by processId.
  void ranks(Session& session, const protocol::AttachRequestArguments& args, backends::AttachSpec spec,
             Responder respond) {
    auto bad = [&](const std::string& text) {
      respond(Error{errors::kBadArguments, "invalid 'attach' request: " + text, true});
    };
    if (!args.processId.is_null())
      return bad("give arguments.processId (one process) or .processIds / .processTree (the ranks of a job), not both");
    if (args.processIds && args.processTree) return bad("give arguments.processIds or .processTree, not both");
    if (args.nodes) {
      if (args.nodes->empty()) return bad("arguments.nodes is empty");
      if (args.nodes->size() > 256) return bad("arguments.nodes: more than 256 nodes in one session");
      for (std::size_t i = 0; i < args.nodes->size(); ++i) {
        const auto& n = (*args.nodes)[i];
        std::string at = "arguments.nodes[" + std::to_string(i) + "]";
        backends::AttachSpec::Node node;
        node.host = n.host.value_or("");
        if (node.host.empty()) return bad(at + ".host: the strata-dap --listen of that node is needed");
        if (!n.port || *n.port < 1 || *n.port > 65535) return bad(at + ".port: the port its strata-dap --listen took");
        node.port = static_cast<std::uint16_t>(*n.port);
        node.token = n.token.value_or("");
        if (node.token.find_first_of("\r\n ") != std::string::npos) return bad(at + ".token: a token has no spaces or line breaks");
        if (node.token.empty() && !loopbackHost(node.host))
          return bad(at + ".token is required: " + node.host + " is not a loopback address (the token its strata-dap "
                     "--listen printed or stored)");
        if (n.processIds.has_value() == n.processTree.has_value())
          return bad(at + ": give processIds or processTree (the ranks on that node)");
        if (n.processIds) {
          if (n.processIds->empty()) return bad(at + ".processIds is empty");
          for (auto p : *n.processIds)
            if (p <= 0 || p > INT32_MAX) return bad(at + ".processIds: " + std::to_string(p) + " is not a process id");
          node.processIds = *n.processIds;
        } else {
          if (*n.processTree <= 0 || *n.processTree > INT32_MAX)
            return bad(at + ".processTree: " + std::to_string(*n.processTree) + " is not a process id");
          node.processTree = *n.processTree;
        }
        spec.nodes.push_back(std::move(node));
      }
    }
    if (args.connect || args.listen || args.port || args.host)
      return bad("arguments.processIds / .processTree attach by pid; they take no connect, listen, host or port");
    if (spec.native) return bad("\"native\": true (mixed mode) attaches to one process (arguments.processId)");
    constexpr std::size_t kMaxRanks = 1024;
    if (args.processIds) {
      if (args.processIds->empty()) return bad("arguments.processIds is empty");
      if (args.processIds->size() > kMaxRanks)
        return bad("arguments.processIds: more than " + std::to_string(kMaxRanks) + " processes in one session");
      for (std::size_t i = 0; i < args.processIds->size(); ++i) {
        auto p = (*args.processIds)[i];
        if (p <= 0 || p > INT32_MAX)
          return bad("arguments.processIds[" + std::to_string(i) + "]: " + std::to_string(p) + " is not a process id");
      }
      spec.processIds = *args.processIds;
    } else if (args.processTree) {
      if (*args.processTree <= 0 || *args.processTree > INT32_MAX)
        return bad("arguments.processTree: " + std::to_string(*args.processTree) + " is not a process id");
      spec.processTree = *args.processTree;
    }
    if (args.rankFilter) {
      for (std::size_t i = 0; i < args.rankFilter->size(); ++i)
        if ((*args.rankFilter)[i] < 0)
          return bad("arguments.rankFilter[" + std::to_string(i) + "]: " + std::to_string((*args.rankFilter)[i]) +
                     " is not a rank");
      spec.rankFilter = *args.rankFilter;
    }
    spec.stopAll = args.stopAll.value_or(true);
    start(session, spec, respond);
  }

  static Result<std::int64_t> processId(const json::value& v) {
    auto bad = [&] {
      return Error{errors::kBadArguments,
                   "invalid 'attach' request: arguments.processId: expected a process id (a number such as "
                   "4242), got " + json::serialize(v),
                   true};
    };
    if (v.is_int64()) return v.as_int64() > 0 ? Result<std::int64_t>(v.as_int64()) : Result<std::int64_t>(bad());
    if (v.is_uint64()) return v.as_uint64() < (1ull << 31) ? Result<std::int64_t>(static_cast<std::int64_t>(v.as_uint64())) : Result<std::int64_t>(bad());
    if (v.is_string()) {
      std::string text(v.as_string());
      if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return bad();
      std::int64_t n = std::stoll(text);
      if (n <= 0) return bad();
      return n;
    }
    return bad();
  }

  void start(Session& session, const backends::AttachSpec& spec, Responder respond) {
    auto* raw = session.startAttachDebugger(spec);
    auto self = session.shared_from_this();
    raw->attach(spec, [self, respond](Result<void> r) {
      if (!r) {
        Error e = r.takeError();
        e.message = "cannot attach: " + e.message;
        e.showUser = true;
        return respond(std::move(e));
      }
      respond(json::value(nullptr));
      self->backendStarted();
    });
    // Breakpoints the client set before this request go to the program now.
    session.applyEarlyBreakpoints();
  }
};

}  // namespace

std::unique_ptr<Handler> makeAttachHandler() { return std::make_unique<AttachHandler>(); }

}  // namespace strata::adapter
