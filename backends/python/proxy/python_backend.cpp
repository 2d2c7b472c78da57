// The Python backend: launch under the agent, attach to a listening agent, request forwarding.
#include "backends/python/proxy/python_backend.hpp"

#include <filesystem>

#include "backends/python/proxy/peer_check.hpp"
#include "backends/python/proxy/translate.hpp"

#ifndef STRATA_AGENT_BUILD_PYTHONPATH
#define STRATA_AGENT_BUILD_PYTHONPATH ""
#endif

namespace strata::backends {

namespace json = boost::json;
namespace fs = std::filesystem;
using asio::ip::tcp;

namespace {
constexpr auto kConnectTimeout = std::chrono::seconds(30);
// After the process exits, how long to wait for the agent's last events on the link.
constexpr auto kLinkDrainTimeout = std::chrono::seconds(2);
const char* kTokenVariable = "STRATA_LAUNCH_TOKEN";

bool hasAgent(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::exists(dir / "strata" / "__main__.py", ec);
}
}  // namespace

std::string agentPythonPath(const std::string& adapterExecutable) {
  if (const char* env = std::getenv("STRATA_AGENT_PYTHONPATH"); env && hasAgent(env)) return env;
  // Where the adapter is installed comes before the build tree it was built in: a copy
  // installed on the build machine runs with its own agent.
  const fs::path prefix = fs::path(adapterExecutable).parent_path().parent_path();
  // cmake --install, the packages and the wheel (whose prefix is <site-packages>/strata/_prefix):
  // <prefix>/bin/strata-dap, <prefix>/lib/strata/python/strata/.
  if (fs::path installed = prefix / "lib" / "strata" / "python"; hasAgent(installed)) return installed.string();
  if (hasAgent(STRATA_AGENT_BUILD_PYTHONPATH)) return STRATA_AGENT_BUILD_PYTHONPATH;
  return {};
}

PythonBackend::PythonBackend(asio::io_context& io, BackendHost& host)
    : ForwardingHost(host), io_(io), host_(host), timer_(io) {}

PythonBackend::~PythonBackend() {
  *alive_ = false;
  if (listener_) listener_->close();
  if (link_) link_->close();
}

BackendFeatures PythonBackend::features() const { return staticFeatures(); }

BackendFeatures PythonBackend::staticFeatures() {
  BackendFeatures f;
  f.conditionalBreakpoints = f.hitConditionalBreakpoints = f.logPoints = f.functionBreakpoints = true;
  f.evaluateForHovers = f.setVariable = f.setExpression = f.completions = f.exceptionInfo = true;
  f.delayedStackTraceLoading = f.clipboardContext = f.singleThreadExecution = true;
  const char* cond = "Exception types to stop on, e.g. ValueError, KeyError";
  f.exceptionFilters = {
      {"raised", "Raised Exceptions", "Stop whenever an exception is raised", false, true, cond},
      {"uncaught", "Uncaught Exceptions", "Stop where an exception nothing catches is raised", true, true, cond},
      {"userUnhandled", "User Uncaught Exceptions", "Stop when an exception leaves user code into library code",
       false, true, cond},
      // The agent's stop through the CUDA collector's error hook (backends/python/agent/strata/_gpu.py).
      {"cuda", "CUDA errors",
       "Stop when a CUDA call returns a sticky error (illegal address, device assert, launch failure) in a "
       "program run with GPU collection: at the calling line, with the error and the last kernel launched",
       true, false, ""}};
  return f;
}

void PythonBackend::launch(const LaunchSpec& spec, Reply<void> reply) { launchWith(spec, nullptr, std::move(reply)); }

void PythonBackend::launchWith(const LaunchSpec& spec, Starter start, Reply<void> reply) {
  if (spec.interpreter.empty() || spec.interpreter.size() > spec.argv.size())
    return reply(Error{errors::kAgentUnavailable, "the launch names no Python interpreter", true});
  std::string agentDir = agentPythonPath(host_.adapterExecutable());
  if (agentDir.empty())
    return reply(Error{errors::kAgentUnavailable,
                       "the Strata Python agent was not found (looked in " +
                           std::string(STRATA_AGENT_BUILD_PYTHONPATH) +
                           " and beside strata-dap); set STRATA_AGENT_PYTHONPATH to its folder",
                       true});
  justMyCode_ = spec.justMyCode;
  stopOnEntry_ = spec.stopOnEntry;
  subProcess_ = spec.subProcess;
  token_ = makeLaunchToken();
  std::weak_ptr<bool> alive = alive_;
  auto listener = protocol::Listener::open(io_, protocol::HostPort{"127.0.0.1", 0}, [this, alive](tcp::socket s) {
    if (!alive.expired()) onAccept(std::move(s));
  });
  if (!listener) return reply(listener.takeError());
  listener_ = std::move(*listener);

  LaunchSpec child = spec;
  child.argv = spec.interpreter;
  for (const char* a : {"-m", "strata", "--connect"}) child.argv.emplace_back(a);
  child.argv.push_back("127.0.0.1:" + std::to_string(listener_->endpoint().port()));
  child.argv.insert(child.argv.end(), spec.argv.begin() + static_cast<std::ptrdiff_t>(spec.interpreter.size()),
                    spec.argv.end());
  std::string pythonPath = agentDir;
  for (auto it = child.environment.begin(); it != child.environment.end();) {
    if (it->rfind("PYTHONPATH=", 0) == 0) {
      std::string old = it->substr(11);
      if (!old.empty()) pythonPath += ":" + old;
      it = child.environment.erase(it);
    } else {
      ++it;
    }
  }
  child.environment.push_back("PYTHONPATH=" + pythonPath);
  child.environment.push_back(std::string(kTokenVariable) + "=" + token_);

  starting_ = std::move(reply);
  auto onStart = [this, alive](Result<void> r) {
    if (alive.expired() || r.ok()) return;
    failStart(r.takeError());
  };
  if (start) {
    start(child, onStart);
  } else {
    process_ = std::make_unique<ProcessBackend>(io_, static_cast<BackendHost&>(*this));
    process_->launch(child, onStart);
  }
  if (!starting_) return;
  timer_.expires_after(kConnectTimeout);
  timer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired() || !starting_) return;
    failStart(Error{errors::kAgentUnavailable, "the Python program did not connect to the debugger within 30 s", true});
  });
}

void PythonBackend::onAccept(tcp::socket socket) {
  if (!starting_ || link_) return;  // socket closes as it goes out of scope
  // Only the program we started may take the link: whoever else can reach loopback cannot.
  auto pid = loopbackPeerPid(socket);
  if (!pid || !processEnvironmentHas(*pid, std::string(kTokenVariable) + "=" + token_)) return;
  listener_->close();
  startLink(std::move(socket), "launch");
}

void PythonBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  attached_ = true;
  justMyCode_ = spec.justMyCode;
  stopOnEntry_ = spec.stopOnEntry;
  subProcess_ = spec.subProcess;
  attachToken_ = spec.token;
  if (spec.listen) return listenForAgent(spec, std::move(reply));
  auto socket = protocol::dial(io_, protocol::HostPort{spec.host, spec.port});
  if (!socket) {
    Error e = socket.takeError();
    e.message = "nothing accepts connections at " + spec.host + ":" + std::to_string(spec.port) + " (" +
                e.message + "); start the program with python -m strata --listen " + std::to_string(spec.port) +
                " script.py, or give arguments.connect.host and .port";
    return reply(std::move(e));
  }
  if (!attachToken_.empty()) {
    std::string line = "STRATA-TOKEN " + attachToken_ + "\r\n";
    boost::system::error_code ec;
    asio::write(*socket, asio::buffer(line), ec);
    if (ec) return reply(Error{errors::kAgentUnavailable, "cannot send the token: " + ec.message(), true});
  }
  starting_ = std::move(reply);
  startLink(std::move(*socket), "attach");
}

void PythonBackend::adopt(tcp::socket socket, const AttachSpec& spec, Reply<void> reply) {
  attached_ = true;
  justMyCode_ = spec.justMyCode;
  stopOnEntry_ = spec.stopOnEntry;
  subProcess_ = false;  // a process of a job: the ranks backend offers its children itself
  starting_ = std::move(reply);
  startLink(std::move(socket), "attach");
}

void PythonBackend::agentRequest(const std::string& command, json::value arguments, Reply<json::value> reply) {
  if (!link_ || link_->closed())
    return reply(Error{errors::kAgentUnavailable, "the Python program is not connected to the debugger", false});
  link_->request(command, std::move(arguments), std::move(reply));
}

void PythonBackend::processFacts(Reply<ProcessFacts> reply) {
  agentRequest("strataProcess", json::object{}, [reply](Result<json::value> r) {
    if (!r) return reply(r.takeError());
    auto facts = agent::processFacts(*r);
    if (!facts) return reply(facts.takeError());
    reply(std::move(*facts));
  });
}

void requestHandover(tcp::socket socket, const std::string& token, Reply<std::int64_t> reply) {
  auto link = AgentLink::open(std::move(socket), AgentLink::Callbacks{[](const std::string&, const json::value&) {}, [] {}});
  link->request("strataHandover", json::object{{"token", token}}, [link, reply](Result<json::value> r) {
    link->close();
    if (!r) return reply(r.takeError());
    const json::value* port = r->is_object() ? r->get_object().if_contains("port") : nullptr;
    if (!port || !port->is_int64()) return reply(Error{errors::kAgentUnavailable, "no port in its answer", false});
    reply(port->as_int64());
  });
}

void PythonBackend::listenForAgent(const AttachSpec& spec, Reply<void> reply) {
  std::weak_ptr<bool> alive = alive_;
  auto listener = protocol::Listener::open(io_, protocol::HostPort{spec.host, spec.port}, [this, alive](tcp::socket s) {
    if (!alive.expired()) onAgentDialedIn(std::move(s));
  });
  if (!listener) {
    Error e = listener.takeError();
    e.message = "cannot listen on " + spec.host + ":" + std::to_string(spec.port) + ": " + e.message;
    return reply(std::move(e));
  }
  listener_ = std::move(*listener);
  starting_ = std::move(reply);
  listening_ = true;
  std::string where = spec.host + ":" + std::to_string(listener_->endpoint().port());
  listenWhere_ = where;
  std::string command = "python -m strata --connect " + where + (attachToken_.empty() ? "" : " --token TOKEN");
  host_.output(OutputCategory::Console,
               "Waiting for a Python program to connect to " + where + " (" + command + " script.py)\n");
  timer_.expires_after(std::chrono::seconds(spec.timeoutSeconds));
  timer_.async_wait([this, alive, where, command, secs = spec.timeoutSeconds](const boost::system::error_code& ec) {
    if (ec || alive.expired() || !starting_ || (link_ && !listening_)) return;
    failStart(Error{errors::kAgentUnavailable,
                    "no Python program connected to " + where + " within " + std::to_string(secs) +
                        " s; start one with " + command + " script.py (or raise arguments.timeout)",
                    true});
  });
}

std::uint16_t PythonBackend::listeningPort() const { return listener_ ? listener_->endpoint().port() : 0; }

void PythonBackend::onAgentDialedIn(tcp::socket socket) {
  if (!starting_ || link_) return;
  boost::system::error_code ec;
  auto peer = socket.remote_endpoint(ec);
  if (ec) return;
  // From this machine only this user's processes may take the link; off loopback only a peer
  // with the token (which the attach handler requires there).
  if (protocol::isLoopback(peer.address())) {
    auto pid = loopbackPeerPid(socket);
    if (!pid || !processOwnedByUs(*pid)) return;
  } else if (attachToken_.empty()) {
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  auto take = [this, alive](tcp::socket s) {
    if (alive.expired() || !starting_ || link_) return;
    // The listener stays open and the timeout runs until the handshake is done: a connection
    // that closes before it (a port probe, a health check) is not the program.
    startLink(std::move(s), "attach");
  };
  if (attachToken_.empty()) return take(std::move(socket));
  expectTokenLine(std::move(socket), attachToken_, take);
}

void PythonBackend::startLink(tcp::socket socket, const char* startCommand) {
  if (!listening_) timer_.cancel();
  // The children of a program on this machine dial the adapter on loopback; one on another
  // machine could not reach it.
  boost::system::error_code peerError;
  auto peer = socket.remote_endpoint(peerError);
  const bool local = !peerError && protocol::isLoopback(peer.address());
  std::weak_ptr<bool> alive = alive_;
  std::uint64_t generation = ++linkGeneration_;
  link_ = AgentLink::open(std::move(socket), AgentLink::Callbacks{
      [this, alive, generation](const std::string& event, const json::value& body) {
        if (!alive.expired() && generation == linkGeneration_) onAgentEvent(event, body);
      },
      [this, alive, generation] {
        if (!alive.expired() && generation == linkGeneration_) onLinkClosed();
      }});
  json::object init{{"clientID", "strata-dap"}, {"adapterID", "strata"}, {"linesStartAt1", true},
                    {"columnsStartAt1", true}, {"pathFormat", "path"}};
  std::string command = startCommand;
  link_->request("initialize", std::move(init), [this, alive, command, local](Result<json::value> r) {
    if (alive.expired() || !starting_) return;
    if (!r && listening_ && r.error().id == errors::kAgentLinkClosed) return strayConnectionClosed();
    if (!r) return failStart(r.takeError());
    if (listening_) {
      listening_ = false;
      timer_.cancel();
      listener_->close();
    }
    json::object options{{"justMyCode", justMyCode_}, {"stopOnEntry", stopOnEntry_}};
    for (const auto& [key, value] : startArguments_) options[key] = value;
    if (subProcess_ && local) {
      if (!children_) {
        children_ = std::make_unique<ChildSessions>(io_, host_, justMyCode_);
        if (auto opened = children_->open(); !opened) {
          host_.output(OutputCategory::Console, "Child processes will run without the debugger: cannot listen for "
                                                "them on loopback (" + opened.error().message + ")\n");
          children_.reset();
        }
      }
      if (children_) options["strataChildren"] = children_->agentArguments();
    }
    if (local && host_.takesCrashes()) {
      if (!crashes_) {
        crashes_ = std::make_unique<CrashWatch>(io_, [this, alive](const CrashReport& crash) {
          if (alive.expired()) return;
          std::weak_ptr<bool> still = alive_;
          host_.crashed(crash, [this, still] {
            if (!still.expired() && crashes_) crashes_->release();
          });
        });
        if (auto opened = crashes_->open(); !opened) crashes_.reset();
      }
      if (crashes_) options["strataCrash"] = crashes_->agentArguments();
    }
    link_->request(command, std::move(options), [this, alive](Result<json::value> r2) {
      if (alive.expired() || !starting_) return;
      if (!r2) return failStart(r2.takeError());
      started();
    });
  });
}

// Waiting for a program to dial in, a connection closed before answering the handshake: not
// a Python program. The wait goes on, for the next one.
void PythonBackend::strayConnectionClosed() {
  ++linkGeneration_;
  link_.reset();
  host_.output(OutputCategory::Console, "A connection to " + listenWhere_ +
                                            " closed before the debug handshake (not a Strata agent); still waiting.\n");
}

void PythonBackend::started() {
  std::exchange(starting_, {})({});
  for (auto& send : std::exchange(waiting_, {})) send();
}

void PythonBackend::failStart(Error error) {
  startFailed_ = true;
  timer_.cancel();
  if (listener_) listener_->close();
  if (link_) link_->close();
  if (auto reply = std::exchange(starting_, {})) reply(std::move(error));
  for (auto& send : std::exchange(waiting_, {})) send();
  if (process_) process_->terminate(true, [](Result<void>) {});
}

void PythonBackend::abandonStart() {
  if (!starting_) return;
  // A program still waiting for the client's terminal is not started at all.
  if (process_) process_->abandonStart();
  failStart(Error{errors::kAgentUnavailable, "cancelled", false});
}

void PythonBackend::onAgentEvent(const std::string& event, const json::value& body) {
  // An event the agent got wrong is said, not guessed at: the rest of the session goes on.
  auto bad = [this](const Error& e) { host_.output(OutputCategory::Important, "Strata: " + e.message + "\n"); };
  if (event == "stopped") {
    auto r = agent::stopReport(body);
    return r ? host_.stopped(*r) : bad(r.error());
  }
  if (event == "continued") {
    auto r = agent::continuedEvent(body);
    return r ? host_.continued(r->threadId, r->allThreads) : bad(r.error());
  }
  if (event == "thread") {
    auto r = agent::threadEvent(body);
    return r ? host_.threadChanged(r->threadId, r->started) : bad(r.error());
  }
  if (event == "output") {
    auto r = agent::outputEvent(body);
    return r ? host_.output(r->category, std::move(r->text)) : bad(r.error());
  }
  if (event == "breakpoint") {
    auto r = agent::breakpointEvent(body);
    return r ? host_.breakpointChanged(*r) : bad(r.error());
  }
  if (event == "exited") {
    auto r = agent::exitedEvent(body);
    if (r) agentExitCode_ = *r;
    return r ? void() : bad(r.error());
  }
  if (event == "terminated" && attached_) reportExit(ExitStatus{static_cast<int>(agentExitCode_.value_or(0)), {}});
}

void PythonBackend::onLinkClosed() {
  if (starting_) failStart(Error{errors::kAgentUnavailable, "the Python program closed the debug link while starting", true});
  if (pendingExit_) return reportExit(*pendingExit_);
  if (attached_ && !detached_) {
    host_.output(OutputCategory::Console, "The Python program closed the debug link.\n");
    // Without the agent's exited event (a crash, a kill) the status is a guess.
    reportExit(ExitStatus{static_cast<int>(agentExitCode_.value_or(0)), {}, agentExitCode_.has_value()});
  }
}

void PythonBackend::exited(const ExitStatus& status) {
  if (starting_)
    failStart(Error{errors::kAgentUnavailable,
                    "the Python program exited (code " + std::to_string(status.exitCode) +
                        ") before the debugger could connect to it; its output shows why",
                    true});
  if (link_ && !link_->closed()) {
    // The agent's last log-point lines may still be in the socket: let them arrive first.
    pendingExit_ = status;
    std::weak_ptr<bool> alive = alive_;
    timer_.expires_after(kLinkDrainTimeout);
    timer_.async_wait([this, alive](const boost::system::error_code& ec) {
      if (!ec && !alive.expired() && pendingExit_) reportExit(*pendingExit_);
    });
    return;
  }
  reportExit(status);
}

void PythonBackend::reportExit(const ExitStatus& status) {
  if (exitReported_) return;
  exitReported_ = true;
  timer_.cancel();
  host_.exited(status);
}

template <class T, class Convert>
void PythonBackend::call(const char* command, json::value args, Reply<T> reply, Convert convert) {
  if (starting_ && !startFailed_) {
    waiting_.push_back([this, command, args = std::move(args), reply = std::move(reply), convert]() mutable {
      call(command, std::move(args), std::move(reply), convert);
    });
    return;
  }
  if (startFailed_ || !link_ || link_->closed())
    return reply(Error{errors::kAgentUnavailable, "the Python program is not connected to the debugger", false});
  link_->request(command, std::move(args), [reply = std::move(reply), convert](Result<json::value> r) {
    if (!r) return reply(r.takeError());
    reply(convert(*r));
  });
}

void PythonBackend::configurationDone(Reply<void> reply) {
  call("configurationDone", json::object{}, std::move(reply), [](const json::value&) { return Result<void>{}; });
}

void PythonBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  switch (set.kind) {
    case BreakpointSet::Kind::Source: return sendSources(set.path, set.sources, std::move(reply));
    case BreakpointSet::Kind::Function: return sendFunctions(set.functions, std::move(reply));
    case BreakpointSet::Kind::Exception: return sendFilters(set.filters, std::move(reply));
  }
}

void PythonBackend::sendSources(const std::string& path, const std::vector<SourceBreakpointSpec>& bps,
                                Reply<std::vector<BreakpointReport>> reply) {
  call("setBreakpoints", agent::breakpointsArguments(path, bps), std::move(reply),
       agent::breakpointReports);
}

void PythonBackend::sendFunctions(const std::vector<FunctionBreakpointSpec>& bps,
                                  Reply<std::vector<BreakpointReport>> reply) {
  call("setFunctionBreakpoints", agent::functionBreakpointsArguments(bps), std::move(reply),
       agent::breakpointReports);
}

void PythonBackend::sendFilters(const std::vector<ExceptionFilterSpec>& filters,
                                Reply<std::vector<BreakpointReport>> reply) {
  call("setExceptionBreakpoints", agent::exceptionBreakpointsArguments(filters), std::move(reply),
       agent::breakpointReports);
}

void PythonBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  if ((!link_ || link_->closed()) && process_) return process_->threads(std::move(reply));
  call("threads", json::object{}, std::move(reply), agent::threads);
}

void PythonBackend::terminate(bool force, Reply<void> reply) {
  if (process_) return process_->terminate(force, std::move(reply));
  if (!link_ || link_->closed()) return reply({});
  // Attached: only the agent can end the program; the link closing confirms it.
  link_->request("disconnect", json::object{{"terminateDebuggee", true}},
                 [reply](Result<json::value>) { reply({}); });
}

void PythonBackend::detach(Reply<void> reply) {
  if (detached_) return reply({});
  detached_ = true;
  timer_.cancel();
  if (listener_) listener_->close();
  // An attach still waiting for its program gets its answer before the session goes.
  if (attached_ && starting_ && !link_)
    std::exchange(starting_, {})(
        Error{errors::kAgentUnavailable, "the session ended before a Python program connected", true});
  auto finish = [this, alive = std::weak_ptr<bool>(alive_), reply](Result<json::value>) {
    if (!alive.expired()) {
      if (link_) link_->close();
      if (process_) process_->detach([](Result<void>) {});
    }
    reply({});
  };
  if (!link_ || link_->closed()) return finish(json::value(nullptr));
  // The agent removes its instrumentation and resumes every thread before it answers.
  link_->request("disconnect", json::object{{"terminateDebuggee", false}}, finish);
}

void PythonBackend::resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  call("continue", json::object{{"threadId", threadId}, {"singleThread", singleThread}}, std::move(reply),
       [](const json::value& b) {
         auto* all = b.is_object() ? b.get_object().if_contains("allThreadsContinued") : nullptr;
         return Result<bool>(!all || !all->is_bool() || all->get_bool());
       });
}

void PythonBackend::step(StepKind kind, const StepOptions& o, Reply<void> reply) {
  const char* command = kind == StepKind::In ? "stepIn" : kind == StepKind::Out ? "stepOut" : "next";
  call(command,
       json::object{{"threadId", o.threadId}, {"singleThread", o.singleThread},
                    {"granularity", agent::granularityName(o.granularity)}},
       std::move(reply), [](const json::value&) { return Result<void>{}; });
}

void PythonBackend::pause(std::int64_t threadId, Reply<void> reply) {
  call("pause", json::object{{"threadId", threadId}}, std::move(reply),
       [](const json::value&) { return Result<void>{}; });
}

void PythonBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                               Reply<StackPage> reply) {
  call("stackTrace", json::object{{"threadId", threadId}, {"startFrame", startFrame}, {"levels", levels}},
       std::move(reply), agent::stackPage);
}

void PythonBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  call("scopes", json::object{{"frameId", frameId}}, std::move(reply),
       agent::scopes);
}

void PythonBackend::variables(const VariablesQuery& q, Reply<std::vector<ValueInfo>> reply) {
  json::object args{{"variablesReference", q.variablesReference}, {"start", q.start}, {"count", q.count}};
  if (!q.filter.empty()) args["filter"] = q.filter;
  call("variables", std::move(args), std::move(reply), agent::variables);
}

void PythonBackend::evaluate(const EvaluateQuery& q, Reply<ValueInfo> reply) {
  json::object args{{"expression", q.expression}, {"context", q.context}};
  if (q.frameId) args["frameId"] = *q.frameId;
  call("evaluate", std::move(args), std::move(reply),
       agent::evaluated);
}

void PythonBackend::setVariable(std::int64_t ref, const std::string& name, const std::string& value,
                                Reply<ValueInfo> reply) {
  call("setVariable", json::object{{"variablesReference", ref}, {"name", name}, {"value", value}},
       std::move(reply), agent::assigned);
}

void PythonBackend::setExpression(const std::string& expression, const std::string& value,
                                  std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
  json::object args{{"expression", expression}, {"value", value}};
  if (frameId) args["frameId"] = *frameId;
  call("setExpression", std::move(args), std::move(reply),
       agent::assigned);
}

void PythonBackend::completions(const CompletionsQuery& q, Reply<std::vector<CompletionEntry>> reply) {
  json::object args{{"text", q.text}, {"column", q.column}, {"line", q.line}};
  if (q.frameId) args["frameId"] = *q.frameId;
  call("completions", std::move(args), std::move(reply),
       agent::completions);
}

void PythonBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  call("exceptionInfo", json::object{{"threadId", threadId}}, std::move(reply),
       agent::exceptionInfo);
}

void PythonBackend::gpuCollector(const GpuCollectorCommand& command, Reply<std::string> reply) {
  // The agent loads the collector with ctypes and answers with its status sentence
  // (backends/python/agent/strata/_gpu.py).
  json::object args{{"collector", command.collector}};
  if (command.start) args["config"] = command.config;
  call(command.start ? "strataGpuStart" : "strataGpuStop", std::move(args), std::move(reply),
       [](const json::value& b) -> Result<std::string> {
         const auto* o = b.if_object();
         const auto* status = o ? o->if_contains("status") : nullptr;
         return std::string(status && status->is_string() ? std::string_view(status->get_string()) : "");
       });
}

void PythonBackend::source(std::int64_t sourceReference, Reply<SourceContent> reply) {
  call("source", json::object{{"sourceReference", sourceReference}}, std::move(reply),
       agent::sourceContent);
}

}  // namespace strata::backends
