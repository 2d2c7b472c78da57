// `strata mcp`: the Model Context Protocol server (stdio, or Streamable HTTP on loopback).
#include "adapter/cli/mcp.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include "adapter/cli/json_fields.hpp"
#include "adapter/cli/mcp_tools.hpp"
#include "adapter/cli/session_core.hpp"
#include "strata/stacks/stacks.hpp"

namespace strata::cli {

namespace fs = std::filesystem;
namespace json = boost::json;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The protocol revisions this server speaks, newest first.
constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
constexpr double kDefaultWaitSeconds = 30, kMaxWaitSeconds = 300;
constexpr std::size_t kMaxTextBytes = 48 * 1024;     // of one answer's text
constexpr std::size_t kMaxStacksJsonBytes = 256 * 1024;

const char* kUsage = R"(usage: strata mcp [--http HOST:PORT] [--adapter PATH]
  A Model Context Protocol server for AI agents: tools to start or attach a debug session, set
  breakpoints, continue and step, read threads, stacks, variables, evaluate expressions, read a
  session's GPU summary and kernels, and the stacks of a running job. Sessions are kept between
  calls. Over stdio by default (for an agent's MCP configuration: command "strata", args ["mcp"]);
  --http serves the Streamable HTTP transport at http://HOST:PORT/mcp on a loopback address.
)";

using namespace fields;

Millis waitOf(const json::object& o) {
  double s = kDefaultWaitSeconds;
  if (auto* v = o.if_contains("timeoutSeconds"); v && (v->is_number())) s = v->to_number<double>();
  s = std::clamp(s, 0.0, kMaxWaitSeconds);
  return Millis(static_cast<std::int64_t>(s * 1000) + 1);
}

json::object toolResult(const Answer& a) {
  std::string text = a.text;
  if (text.size() > kMaxTextBytes)
    text = text.substr(0, kMaxTextBytes) + "\n[... " + std::to_string(text.size() - kMaxTextBytes) + " more bytes]\n";
  json::object r{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}}, {"isError", !a.ok}};
  if (!a.data.empty()) r["structuredContent"] = a.data;
  return r;
}

json::object rpcError(const json::value& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}};
}

// --- the server ---------------------------------------------------------------------------------

class Server {
 public:
  Server(asio::io_context& io, std::string adapter) : io_(io), adapter_(std::move(adapter)) {
    for (const McpTool& t : mcpTools()) {
      std::error_code ec;
      auto schema = json::parse(t.schema, ec);
      if (ec) std::fprintf(stderr, "strata mcp: the schema of %s does not parse: %s\n", t.name, ec.message().c_str());
      tools_.push_back(json::object{{"name", t.name}, {"description", t.description}, {"inputSchema", schema}});
    }
  }

  // One JSON-RPC message; `reply` gets the response, or nothing for a notification.
  void handle(const json::value& message, std::function<void(std::optional<json::value>)> reply) {
    if (!message.is_object()) return reply(rpcError(nullptr, -32600, "a JSON-RPC message is an object"));
    const auto& m = message.get_object();
    const json::value id = m.contains("id") ? m.at("id") : json::value();
    std::string method = str(m, "method");
    if (method.empty()) return reply(std::nullopt);  // a response to nothing we asked, or junk without an id
    if (!m.contains("id")) return reply(std::nullopt);  // notifications: initialized, cancelled, ...
    const json::object params = m.contains("params") && m.at("params").is_object() ? m.at("params").get_object() : json::object();
    auto ok = [id, reply](json::value result) {
      reply(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
    };
    if (method == "initialize") return ok(initialize(params));
    if (method == "ping" || method == "logging/setLevel") return ok(json::object());
    if (method == "tools/list") return ok(json::object{{"tools", tools_}});
    if (method == "tools/call") {
      std::string name = str(params, "name");
      if (std::none_of(mcpTools().begin(), mcpTools().end(), [&](const McpTool& t) { return name == t.name; }))
        return reply(rpcError(id, -32602, "unknown tool '" + name + "'"));
      const json::object args = params.contains("arguments") && params.at("arguments").is_object()
                                    ? params.at("arguments").get_object() : json::object();
      return call(name, args, [ok](Answer a) { ok(toolResult(a)); });
    }
    if (method == "resources/list") return ok(json::object{{"resources", json::array()}});
    if (method == "prompts/list") return ok(json::object{{"prompts", json::array()}});
    reply(rpcError(id, -32601, "method not found: " + method));
  }

  // The end of the transport: sessions end (started programs are ended, attached ones run on).
  void shutdown(std::function<void()> done) {
    auto remaining = std::make_shared<std::size_t>(sessions_.size() + 1);
    auto finish = [remaining, done] {
      if (--*remaining == 0) done();
    };
    for (auto& [_, s] : sessions_) s->end([finish](Answer) { finish(); });
    finish();
  }

 private:
  json::object initialize(const json::object& params) {
    std::string asked = str(params, "protocolVersion");
    std::string version = kProtocolVersions[0];
    for (const char* v : kProtocolVersions)
      if (asked == v) version = v;
    return {{"protocolVersion", version},
            {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}, {"logging", json::object()}}},
            {"serverInfo", json::object{{"name", "strata"}, {"title", "Strata debugger"}, {"version", STRATA_VERSION}}},
            {"instructions",
             "Strata debugs Python, C/C++ and CUDA programs. start_debugging (stops before the first line), "
             "set_breakpoint, resume (continue or step: answers at the next stop with the stack and locals), "
             "variables, evaluate; end_session when done. parallel_stacks reads where every thread of a running "
             "job is without stopping it."}};
  }

  Result<DebugSession*> pick(const json::object& args) {
    std::string name = str(args, "session");
    if (!name.empty()) {
      auto it = sessions_.find(name);
      if (it == sessions_.end()) return Error{errors::kBadArguments, "no session named " + name + " (list_sessions lists them)", true};
      return it->second.get();
    }
    if (sessions_.empty()) return Error{errors::kBadArguments, "no session: start one with start_debugging or attach", true};
    if (sessions_.size() > 1) {
      std::string names;
      for (const auto& [n, _] : sessions_) names += (names.empty() ? "" : ", ") + n;
      return Error{errors::kBadArguments, "several sessions (" + names + "): name one with `session`", true};
    }
    return sessions_.begin()->second.get();
  }

  std::string freshName(std::string stem) {
    std::string clean;
    for (char c : stem) clean += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
    if (clean.empty()) clean = "session";
    std::string name = clean;
    for (int n = 2; sessions_.count(name); ++n) name = clean + "-" + std::to_string(n);
    return name;
  }

  void call(const std::string& tool, const json::object& args, AnswerFn done) {
    auto fail = [&](const std::string& m) { done(Answer::failure(m)); };
    std::error_code ec;
    const fs::path base = str(args, "cwd").empty() ? fs::current_path(ec) : fs::absolute(str(args, "cwd"), ec);
    auto file = [&](const std::string& f) { return (base / f).lexically_normal().string(); };

    if (tool == "start_debugging" || tool == "attach") {
      SessionStart spec;
      spec.adapter = adapter_;
      spec.native = flag(args, "native", false);
      std::string name = str(args, "session");
      if (tool == "attach") {
        auto pid = integer(args, "pid");
        if (!pid || *pid <= 0) return fail("attach needs `pid`, a process id");
        spec.attachPid = *pid;
        if (name.empty()) name = freshName("pid" + std::to_string(*pid));
      } else {
        std::string program = str(args, "program"), trace = str(args, "trace");
        if (program.empty() && trace.empty()) return fail("start_debugging needs `program` (or `trace`)");
        if (!trace.empty()) {
          spec.trace = file(trace);
          if (name.empty()) name = freshName(fs::path(trace).stem().string());
        } else {
          spec.command.push_back(program.find('/') == std::string::npos && !fs::exists(base / program) ? program : file(program));
          if (auto* a = args.if_contains("args"); a && a->is_array())
            for (const auto& v : a->get_array())
              if (v.is_string()) spec.command.emplace_back(v.get_string());
          if (name.empty()) name = freshName(fs::path(program).stem().string());
        }
        spec.cwd = base.string();
        spec.python = str(args, "python");
        spec.gpu = str(args, "gpu");
        spec.stopOnEntry = flag(args, "stopOnEntry", true);
        if (auto* e = args.if_contains("env"); e && e->is_object())
          for (const auto& [k, v] : e->get_object())
            if (v.is_string()) spec.env.emplace_back(std::string(k), std::string(v.get_string()));
        if (auto* bs = args.if_contains("breakpoints"); bs && bs->is_array())
          for (const auto& b : bs->get_array()) {
            if (!b.is_object()) continue;
            BreakSpec bp;
            bp.file = file(str(b.get_object(), "file"));
            bp.line = integer(b.get_object(), "line").value_or(0);
            if (b.get_object().contains("condition")) bp.condition = str(b.get_object(), "condition");
            if (bp.line <= 0) return fail("a breakpoint needs `file` and `line` (from 1)");
            spec.breaks.push_back(std::move(bp));
          }
      }
      if (sessions_.count(name)) return fail("a session named " + name + " exists: end it (end_session) or pick another `session`");
      auto session = std::make_unique<DebugSession>(io_, name);
      DebugSession* s = session.get();
      sessions_[name] = std::move(session);
      return s->start(spec, waitOf(args), [this, name, done](Answer a) {
        a.data["session"] = name;
        // A start that failed leaves nothing to talk to.
        if (!a.ok) {
          if (auto it = sessions_.find(name); it != sessions_.end()) retire(name);
        }
        done(std::move(a));
      });
    }
    if (tool == "list_sessions") {
      Answer a;
      json::array list;
      for (const auto& [n, s] : sessions_) {
        Answer st = s->status();
        a.text += st.text + "\n";
        list.push_back(st.data);
      }
      if (list.empty()) a.text = "no sessions (start_debugging or attach starts one)\n";
      a.data["sessions"] = std::move(list);
      return done(std::move(a));
    }
    if (tool == "parallel_stacks") return parallelStacks(args, done);

    auto picked = pick(args);
    if (!picked) return fail(picked.error().message);
    DebugSession& s = **picked;
    std::int64_t thread = integer(args, "threadId").value_or(0), frame = integer(args, "frame").value_or(0);
    if (tool == "set_breakpoint") {
      BreakSpec b;
      b.file = file(str(args, "file"));
      b.line = integer(args, "line").value_or(0);
      if (str(args, "file").empty() || b.line <= 0) return fail("set_breakpoint needs `file` and `line` (from 1)");
      if (args.contains("condition")) b.condition = str(args, "condition");
      return s.addBreak(b, done);
    }
    if (tool == "clear_breakpoints")
      return s.clearBreaks(str(args, "file").empty() ? std::string() : file(str(args, "file")), integer(args, "line").value_or(0), done);
    if (tool == "resume") {
      std::string action = str(args, "action");
      Resume how = action == "next" ? Resume::Next : action == "step_in" ? Resume::StepIn
                 : action == "step_out" ? Resume::StepOut : Resume::Continue;
      if (!action.empty() && action != "continue" && how == Resume::Continue)
        return fail("action is continue, next, step_in or step_out, not '" + action + "'");
      return s.resume(how, thread, waitOf(args), done);
    }
    if (tool == "pause") return s.pause(waitOf(args), done);
    if (tool == "wait_for_stop") return s.wait(waitOf(args), done);
    if (tool == "threads") return s.threads(done);
    if (tool == "stack_trace") return s.stack(thread, std::clamp<std::int64_t>(integer(args, "levels").value_or(20), 1, 1000), done);
    if (tool == "variables") return s.locals(thread, frame, done);
    if (tool == "evaluate") {
      if (str(args, "expression").empty()) return fail("evaluate needs `expression`");
      return s.evaluate(str(args, "expression"), thread, frame, done);
    }
    if (tool == "debug_console") return s.console(str(args, "command"), done);
    if (tool == "gpu_summary") {
      std::int64_t limit = std::clamp<std::int64_t>(integer(args, "limit").value_or(10), 1, 1000);
      return s.request("gpuSummary", json::object{{"limit", limit}}, [&s, limit, done](Answer data) {
        if (!data.ok) return done(std::move(data));
        s.console("!gpu top " + std::to_string(limit), [data, done](Answer text) {
          text.data = data.data;
          done(std::move(text));
        });
      });
    }
    if (tool == "gpu_kernel") {
      auto id = integer(args, "id");
      if (!id || *id <= 0) return fail("gpu_kernel needs `id`, a record id from gpu_summary");
      return s.request("gpuKernel", json::object{{"id", *id}}, [&s, id, done](Answer data) {
        if (!data.ok) return done(std::move(data));
        s.console("!gpu kernel " + std::to_string(*id), [data, done](Answer text) {
          text.data = data.data;
          done(std::move(text));
        });
      });
    }
    if (tool == "end_session") {
      std::string name = s.name();
      return s.end([this, name, done](Answer a) {
        retire(name);
        done(std::move(a));
      });
    }
    fail("tool '" + tool + "' is not implemented");
  }

  // Sessions are destroyed outside their own callbacks.
  void retire(const std::string& name) {
    auto it = sessions_.find(name);
    if (it == sessions_.end()) return;
    std::shared_ptr<DebugSession> gone(std::move(it->second));
    sessions_.erase(it);
    asio::post(io_, [gone] {});
  }

  void parallelStacks(const json::object& args, AnswerFn done) {
    std::vector<pid_t> pids;
    if (auto* p = args.if_contains("pids"); p && p->is_array())
      for (const auto& v : p->get_array())
        if (v.is_int64() && v.get_int64() > 0) pids.push_back(static_cast<pid_t>(v.get_int64()));
    bool children = false;
    if (auto tree = integer(args, "processTree"); tree && *tree > 0) {
      pids.insert(pids.begin(), static_cast<pid_t>(*tree));
      children = true;
    }
    if (pids.empty()) {
      auto picked = pick(args);
      if (!picked) return done(Answer::failure("name the processes (pids or processTree), or start a session: " + picked.error().message));
      auto st = (*picked)->status();
      auto* pid = st.data.if_contains("pid");
      if (!pid || !pid->is_int64()) return done(Answer::failure("session " + (*picked)->name() + " has no process"));
      pids.push_back(static_cast<pid_t>(pid->get_int64()));
      children = true;
    }
    auto tree = stacks::parallelStacks(std::move(pids), children, flag(args, "pythonOnly", false));
    if (!tree) return done(Answer::failure(tree.error().message));
    Answer a;
    a.text = tree->text;
    if (json::serialize(tree->json).size() <= kMaxStacksJsonBytes) a.data = std::move(tree->json);
    else a.data = {{"processes", tree->json["processes"]}, {"note", "the tree is in the text: too large to repeat as data"}};
    done(std::move(a));
  }

  asio::io_context& io_;
  std::string adapter_;
  json::array tools_;
  std::map<std::string, std::unique_ptr<DebugSession>> sessions_;
};

// --- stdio: one JSON-RPC message per line ---------------------------------------------------------

class StdioLoop {
 public:
  StdioLoop(asio::io_context& io, Server& server) : io_(io), server_(server), in_(io, ::dup(0)), buf_(64 << 20) {}
  void next() {
    asio::async_read_until(in_, buf_, '\n', [this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        // The client closed stdin: the sessions end, then the server.
        server_.shutdown([this] { io_.stop(); });
        return;
      }
      std::string line(asio::buffers_begin(buf_.data()), asio::buffers_begin(buf_.data()) + static_cast<std::ptrdiff_t>(n));
      buf_.consume(n);
      if (line.find_first_not_of(" \t\r\n") != std::string::npos) {
        std::error_code jec;
        auto message = json::parse(line, jec);
        if (jec) write(rpcError(nullptr, -32700, "parse error: " + jec.message()));
        else server_.handle(message, [](std::optional<json::value> r) {
          if (r) write(*r);
        });
      }
      next();
    });
  }

 private:
  static void write(const json::value& v) {
    std::string line = json::serialize(v) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }
  asio::io_context& io_;
  Server& server_;
  asio::posix::stream_descriptor in_;
  asio::streambuf buf_;
};

// --- Streamable HTTP on loopback -------------------------------------------------------------------

// Host and Origin must name this machine: a web page must not reach the server through a DNS
// name that resolves to 127.0.0.1 (the protocol's DNS rebinding rule).
bool localName(std::string_view host) {
  if (host.rfind("http://", 0) == 0) host.remove_prefix(7);
  else if (host.rfind("https://", 0) == 0) host.remove_prefix(8);
  if (host.rfind("[::1]", 0) == 0) return host.size() == 5 || host[5] == ':';
  auto colon = host.find(':');
  std::string_view name = host.substr(0, colon);
  return name == "localhost" || name == "127.0.0.1";
}

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(tcp::socket socket, Server& server) : stream_(std::move(socket)), server_(server) {}
  void start() { read(); }

 private:
  void read() {
    request_ = {};
    http::async_read(stream_, buffer_, request_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->handle();
    });
  }

  void respond(http::status status, std::string body, const char* type = "application/json") {
    auto res = std::make_shared<http::response<http::string_body>>(status, request_.version());
    res->set(http::field::server, "strata");
    if (!body.empty()) res->set(http::field::content_type, type);
    if (status == http::status::method_not_allowed) res->set(http::field::allow, "POST");
    res->keep_alive(request_.keep_alive());
    res->body() = std::move(body);
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (ec || !res->keep_alive()) return self->close();
      self->read();
    });
  }

  void handle() {
    auto host = request_[http::field::host];
    auto origin = request_[http::field::origin];
    if (!localName(host) || (!origin.empty() && !localName(origin)))
      return respond(http::status::forbidden, json::serialize(rpcError(nullptr, -32000, "forbidden: Host and Origin must be this machine")));
    if (request_.target() != "/mcp") return respond(http::status::not_found, "not found: the endpoint is /mcp", "text/plain");
    if (request_.method() != http::verb::post)
      return respond(http::status::method_not_allowed, "this server answers POST requests only", "text/plain");
    std::error_code ec;
    auto message = json::parse(request_.body(), ec);
    if (ec) return respond(http::status::bad_request, json::serialize(rpcError(nullptr, -32700, "parse error: " + ec.message())));
    server_.handle(message, [self = shared_from_this()](std::optional<json::value> r) {
      if (!r) return self->respond(http::status::accepted, "");
      self->respond(http::status::ok, json::serialize(*r));
    });
  }

  void close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  Server& server_;
};

class HttpListener {
 public:
  HttpListener(asio::io_context& io, Server& server) : acceptor_(io), server_(server) {}

  Result<void> listen(const std::string& where) {
    auto colon = where.rfind(':');
    if (colon == std::string::npos) return Error{errors::kBadCommandLine, "--http needs HOST:PORT, got '" + where + "'", true};
    std::string host = where.substr(0, colon), port = where.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    boost::system::error_code ec;
    auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
    if (ec || !address.is_loopback())
      return Error{errors::kBadCommandLine, "--http serves loopback only (127.0.0.1, [::1] or localhost), not '" + host + "'", true};
    tcp::endpoint endpoint(address, static_cast<unsigned short>(std::strtoul(port.c_str(), nullptr, 10)));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Error{errors::kSystemCallFailed, "listen on " + where + ": " + ec.message(), true};
    auto bound = acceptor_.local_endpoint();
    std::string shown = bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
    std::fprintf(stderr, "strata mcp: listening on http://%s:%u/mcp\n", shown.c_str(), bound.port());
    std::fflush(stderr);
    accept();
    return {};
  }
  void close() {
    boost::system::error_code ec;
    acceptor_.close(ec);
  }

 private:
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;
      std::make_shared<HttpConnection>(std::move(socket), server_)->start();
      accept();
    });
  }
  tcp::acceptor acceptor_;
  Server& server_;
};

}  // namespace

int mcpCommand(int argc, char** argv, int first) {
  std::string http, adapter;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((a == "--http" || a == "--adapter") && i + 1 < argc) (a == "--http" ? http : adapter) = argv[++i];
    else {
      std::fprintf(stderr, "strata: mcp: unexpected argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (adapter.empty()) adapter = siblingAdapter();
  asio::io_context io(1);
  Server server(io, adapter);
  std::unique_ptr<StdioLoop> stdio;
  std::unique_ptr<HttpListener> listener;
  if (http.empty()) {
    stdio = std::make_unique<StdioLoop>(io, server);
    stdio->next();
  } else {
    listener = std::make_unique<HttpListener>(io, server);
    if (auto r = listener->listen(http); !r) {
      std::fprintf(stderr, "strata: mcp: %s\n", r.error().message.c_str());
      return 2;
    }
  }
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    if (listener) listener->close();
    server.shutdown([&io] { io.stop(); });
  });
  io.run();
  return 0;
}

}  // namespace strata::cli
