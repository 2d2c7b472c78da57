// The session: lifecycle rules of the protocol live here, request semantics in handlers/.
#include "adapter/session.hpp"

#include "adapter/capabilities.hpp"

#include <exception>

namespace strata::adapter {

using protocol::Request;

// The host one backend reports through: each report reaches the session with the backend that
// made it, which owns the ids inside (threads, frames, variables, sources, breakpoints).
class Session::Port final : public backends::BackendHost {
 public:
  explicit Port(Session& session) : session_(session) {}
  backends::Backend* owner = nullptr;

  void output(backends::OutputCategory category, std::string text) override {
    session_.output(category, std::move(text));
  }
  void processStarted(const std::string& name, std::int64_t pid, bool launched) override {
    session_.processStarted(name, pid, launched);
  }
  void exited(const backends::ExitStatus& status) override { session_.exited(owner, status); }
  bool congested() const override { return session_.congested(); }
  void whenWritable(std::function<void()> resume) override { session_.whenWritable(std::move(resume)); }
  bool canRunInTerminal() const override { return session_.canRunInTerminal(); }
  void runInTerminal(const backends::TerminalLaunch& launch, backends::Reply<backends::TerminalProcess> reply) override {
    session_.runInTerminal(launch, std::move(reply));
  }
  const std::string& adapterExecutable() const override { return session_.adapterExecutable(); }
  bool canStartDebugging() const override { return session_.canStartDebugging(); }
  void startDebugging(const std::string& request, const std::string& configuration,
                      backends::Reply<void> reply) override {
    session_.startDebugging(request, configuration, std::move(reply));
  }
  bool takesCrashes() const override { return session_.takesCrashes(owner); }
  void crashed(const backends::CrashReport& crash, std::function<void()> release) override {
    session_.crashed(owner, crash, std::move(release));
  }
  void stopped(const backends::StopReport& stop) override { session_.stopped(owner, stop); }
  void continued(std::int64_t threadId, bool allThreads) override { session_.continued(owner, threadId, allThreads); }
  void threadChanged(std::int64_t threadId, bool started) override { session_.threadChanged(owner, threadId, started); }
  void breakpointChanged(const backends::BreakpointReport& state) override { session_.breakpointChanged(owner, state); }
  void breakpointPlaced(backends::Owner heldOwner, std::int64_t heldId, const backends::BreakpointReport& placed) override {
    session_.breakpointPlaced(owner, heldOwner, heldId, placed);
  }
  void partAdded(backends::Backend& part) override { session_.partAdded(&part); }
  void partGone(backends::Backend& part) override { session_.partGone(&part); }
  void moduleChanged(const backends::ModuleInfo& module, const std::string& reason) override {
    session_.moduleChanged(module, reason);
  }
  void progress(const backends::ProgressReport& report) override { session_.progress(report); }
  void gpuActivity(const backends::GpuActivityReport& report) override { session_.gpuActivity(report); }

 private:
  Session& session_;
};

Session::Session(asio::io_context& io, std::shared_ptr<protocol::Connection> connection,
                 SessionOptions options, std::function<void()> onEnd)
    : io_(io), connection_(std::move(connection)), options_(std::move(options)), onEnd_(std::move(onEnd)) {
  // What every debugger supports, and what the services beside them bring, is known now; the
  // chosen debugger adds the rest after launch.
  capabilities_ = toCapabilities(withServices(featuresOfEveryBackend(options_.backendFactory.debuggers),
                                              options_.backendFactory.services));
  for (auto& h : makeHandlers()) {
    h->declare(capabilities_);
    std::string name(h->command());
    handlers_.emplace(std::move(name), std::move(h));
  }
  if (options_.backendFactory.gpu) {
    auto port = newPort();
    auto backend = options_.backendFactory.gpu(*this, *port);
    if (backend) gpu_ = hold(std::move(port), std::move(backend)).backend.get();
  }
}

Session::~Session() {
  cancelWork_->store(true);
  if (worker_) worker_->join();
  // Backends first (they may still report while going), then their ports.
  while (!backends_.empty()) {
    backends_.back().backend.reset();
    backends_.pop_back();
  }
}

void Session::start() {
  auto weak = weak_from_this();
  note("session started on " + connection_->describe());
  connection_->start(protocol::Connection::Callbacks{
      [weak](std::string body) {
        if (auto s = weak.lock()) s->onFrame(std::move(body));
      },
      [weak](const std::string& reason) {
        if (auto s = weak.lock()) s->onFramingError(reason);
      },
      [weak] {
        if (auto s = weak.lock()) s->onClosed();
      }});
}

void Session::note(const std::string& text) {
  if (options_.log) options_.log->write(options_.id, "--", text);
}

void Session::send(json::value message) {
  std::string text = protocol::serialize(message);
  if (options_.log) options_.log->write(options_.id, "->", text);
  connection_->send(std::move(text));
}

void Session::sendEvent(std::string_view event, json::value body) {
  // No event may precede the initialize response; handlers never try, backends cannot exist.
  if (state_ == State::AwaitingInitialize) return;
  send(protocol::toJson(protocol::Event{nextSeq_++, std::string(event), std::move(body)}));
}

void Session::respond(std::int64_t requestSeq, const std::string& command, Result<json::value> body) {
  protocol::Response r;
  r.seq = nextSeq_++;
  r.request_seq = requestSeq;
  r.command = command;
  r.success = body.ok();
  if (body.ok()) {
    r.body = std::move(body.value());
  } else {
    const Error& e = body.error();
    r.message = e.message;
    r.body = protocol::errorBody(e);
    note("error response to '" + command + "': " + e.message);
  }
  send(protocol::toJson(r));
}

void Session::onFrame(std::string body) {
  if (ended_) return;
  if (options_.log) options_.log->write(options_.id, "<-", body);
  auto parsed = protocol::parseMessage(body);
  if (auto* failure = std::get_if<protocol::ParseFailure>(&parsed)) {
    Error e = failure->error;
    e.id = errors::kMalformedMessage;
    if (failure->seq) {
      // Enough of a request survived to answer it properly.
      return respond(*failure->seq, failure->command.empty() ? "unknown" : failure->command, e);
    }
    return reportDroppedMessage(e.message);
  }
  auto& message = std::get<protocol::Message>(parsed);
  if (auto* request = std::get_if<Request>(&message)) return dispatch(std::move(*request));
  if (auto* response = std::get_if<protocol::Response>(&message)) {
    auto it = reverse_.find(response->request_seq);
    if (it == reverse_.end()) return note("ignored a response to an unknown request");
    auto cb = std::move(it->second);
    reverse_.erase(it);
    if (!response->success)
      return cb(Error{errors::kInternal, response->message.value_or("the client refused the request"), true});
    return cb(std::move(*response));
  }
  note("ignored an event from the client");
}

void Session::reportDroppedMessage(const std::string& why) {
  if (state_ == State::AwaitingInitialize) {
    // Nothing that conforms to the protocol can be sent before the initialize response and
    // there is no request to answer: this peer does not speak DAP. Close cleanly.
    note("closing: " + why);
    closeAfterFlush();
    return;
  }
  sendEvent("output", json::value_from(protocol::OutputEventBody{
                          "important", "Strata ignored a message it could not read: " + why + "\n",
                          {}, {}, {}, {}, {}, nullptr}));
}

void Session::onFramingError(const std::string& reason) {
  note("framing error: " + reason);
  if (state_ != State::AwaitingInitialize)
    sendEvent("output", json::value_from(protocol::OutputEventBody{
                            "important",
                            "Strata closed the connection: the stream is not valid DAP framing (" +
                                reason + ")\n",
                            {}, {}, {}, {}, {}, nullptr}));
  // Connection::close() follows in the transport after this callback.
}

void Session::dispatch(Request request) {
  if (state_ == State::AwaitingInitialize && request.command != "initialize")
    return respond(request.seq, request.command,
                   Error{errors::kNotInitialized,
                         "the first request must be 'initialize' (got '" + request.command + "')",
                         false});
  if (state_ != State::AwaitingInitialize && request.command == "initialize")
    return respond(request.seq, request.command,
                   Error{errors::kAlreadyInitialized, "the session is already initialized", false});
  auto it = handlers_.find(request.command);
  if (it == handlers_.end())
    return respond(request.seq, request.command,
                   Error{errors::kUnsupportedRequest,
                         "Strata does not support the '" + request.command + "' request", false});
  Handler& handler = *it->second;
  if (inFlight_.count(request.seq))
    return respond(request.seq, request.command,
                   Error{errors::kMalformedMessage,
                         "seq " + std::to_string(request.seq) + " is already in use by a pending request",
                         false});
  inFlight_[request.seq] = InFlight{request.command, &handler};
  std::weak_ptr<Session> weak = weak_from_this();
  std::int64_t seq = request.seq;
  std::string command = request.command;
  Responder responder = [weak, seq, command](Result<json::value> result) {
    auto self = weak.lock();
    if (!self || self->ended_) return;
    // Answered already (cancelled): the late result is dropped.
    if (self->inFlight_.erase(seq) == 0) return;
    self->respond(seq, command, std::move(result));
  };
  try {
    handler.handle(*this, request, responder);
  } catch (const std::exception& e) {
    note(std::string("internal error in '") + command + "': " + e.what());
    responder(Error{errors::kInternal, std::string("internal error: ") + e.what(), true});
  } catch (...) {
    note("internal error in '" + command + "'");
    responder(Error{errors::kInternal, "internal error", true});
  }
}

bool Session::cancel(std::int64_t requestId) {
  auto it = inFlight_.find(requestId);
  if (it == inFlight_.end() || !it->second.handler->cancellable()) return false;
  std::string command = it->second.command;
  const Handler* handler = it->second.handler;
  inFlight_.erase(it);
  // The DAP convention: a cancelled request fails with the message "cancelled". What the
  // handler then undoes may still answer; that late answer is dropped.
  respond(requestId, command, Error{errors::kCancelled, "cancelled", false});
  handler->cancelled(*this);
  return true;
}

void Session::markInitialized(const protocol::InitializeRequestArguments& client) {
  client_ = client;
  state_ = State::Initialized;
}

std::unique_ptr<Session::Port> Session::newPort() { return std::make_unique<Port>(*this); }

Session::Held& Session::hold(std::unique_ptr<Port> port, std::unique_ptr<backends::Backend> backend) {
  port->owner = backend.get();
  backends_.push_back(Held{std::move(port), std::move(backend)});
  return backends_.back();
}

std::vector<backends::Backend*> Session::allBackends() const {
  std::vector<backends::Backend*> all;
  if (debugger_) all.push_back(debugger_);
  // The debugger a post-mortem one took over from is asked nothing more: its program is frozen.
  for (const auto& h : backends_)
    if (h.backend.get() != debugger_ && h.backend.get() != takenOver_) all.push_back(h.backend.get());
  return all;
}

void Session::setDebugger(backends::Backend* debugger, bool launched) {
  debugger_ = debugger;
  launchedDebuggee_ = launched;
  state_ = State::Launched;
}

backends::Backend* Session::startDebugger(const backends::LaunchSpec& spec) {
  coreOnCrash_ = spec.coreOnCrash;
  auto port = newPort();
  auto backend = options_.backendFactory.launch(*this, *port, spec);
  auto* raw = hold(std::move(port), std::move(backend)).backend.get();
  setDebugger(raw, true);
  return raw;
}

backends::Backend* Session::startAttachDebugger(const backends::AttachSpec& spec) {
  auto port = newPort();
  auto backend = options_.backendFactory.attach(*this, *port, spec);
  auto* raw = hold(std::move(port), std::move(backend)).backend.get();
  setDebugger(raw, false);
  return raw;
}

// A crash the debugger cannot stop at (session_debug.cpp: takesCrashes): a post-mortem debugger
// takes the session over.
void Session::crashed(backends::Backend* from, const backends::CrashReport& crash, std::function<void()> release) {
  if (!takesCrashes(from)) return release();
  output(backends::OutputCategory::Console,
         "Thread " + std::to_string(crash.threadId) + " of process " + std::to_string(crash.pid) + " crashed (" +
             backends::signalName(crash.signal) + "): the native debugger takes the session over to stop there.\n");
  // The new debugger serves every thread from now on; the old one's ids and frames are gone.
  auto port = newPort();
  backends::CrashReport report = crash;
  report.coreOnCrash = coreOnCrash_;
  auto backend = options_.backendFactory.postMortem(*this, *port, report, std::move(release));
  if (!backend) return;
  auto* raw = hold(std::move(port), std::move(backend)).backend.get();
  partGone(from);
  threadOwners_.clear();
  programRan();
  takenOver_ = from;
  debugger_ = raw;
}

void Session::launchedWithoutProgram() { state_ = State::Launched; }

backends::Backend* Session::threadOwner(std::int64_t threadId) const {
  if (auto it = threadOwners_.find(threadId); it != threadOwners_.end()) return it->second;
  return debugger_;
}

void Session::noteThreads(backends::Backend* owner, const std::vector<backends::ThreadInfo>& threads) {
  for (const auto& t : threads) threadOwners_[t.id] = owner;
}

void Session::closeAfterFlush() {
  if (debugger_ && !debuggeeEnded_) {
    // Leaving without terminating: the debuggee keeps running, untouched.
    debugger_->detach([](Result<void>) {});
  }
  connection_->close();
}

void Session::offload(Offloaded work, std::function<void(Result<boost::json::value>)> done) {
  if (!worker_) worker_ = std::make_unique<asio::thread_pool>(1);
  asio::post(*worker_, [&io = io_, cancel = cancelWork_, work = std::move(work), done = std::move(done)]() mutable {
    Result<boost::json::value> r = work([&cancel] { return cancel->load(); });
    // The worker keeps nothing of the session once the result is on its way.
    asio::post(io, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    work = nullptr;
  });
}

void Session::onClosed() {
  if (ended_) return;
  cancelWork_->store(true);
  note("connection closed");
  if (debugger_ && !debuggeeEnded_) debugger_->detach([](Result<void>) {});
  ended_ = true;
  for (auto& [seq, cb] : std::exchange(reverse_, {}))
    cb(Error{errors::kInternal, "the client went away", false});
  // Destroy the backends on a fresh stack: we may be inside one of their callbacks. The last
  // made goes first (the GPU backend, made first, may serve the debugger until then).
  auto self = shared_from_this();
  asio::post(io_, [self] {
    self->debugger_ = self->gpu_ = nullptr;
    while (!self->backends_.empty()) {
      self->backends_.back().backend.reset();
      self->backends_.pop_back();
    }
    if (self->onEnd_) std::exchange(self->onEnd_, {})();
  });
}

// ---- what backends report ---------------------------------------------------------------

void Session::output(backends::OutputCategory category, std::string text) {
  static const char* names[] = {"stdout", "stderr", "console", "important"};
  protocol::OutputEventBody body;
  body.category = names[static_cast<int>(category)];
  body.output = std::move(text);
  sendEvent("output", json::value_from(body));
}

void Session::processStarted(const std::string& name, std::int64_t pid, bool launched) {
  if (!processId_) processId_ = pid;
  protocol::ProcessEventBody body;
  body.name = name;
  body.systemProcessId = pid;
  body.isLocalProcess = true;
  body.startMethod = launched ? "launch" : "attach";
  body.pointerSize = 64;
  sendEvent("process", json::value_from(body));
}

void Session::exited(backends::Backend* from, const backends::ExitStatus& status) {
  // Only the program's end ends the debuggee; a service beside it has no program.
  // After a crash the debugger taken over may see the end first (it reaps the child it launched).
  if (debuggeeEnded_ || (from != debugger_ && from != takenOver_) || (from == takenOver_ && !status.known)) return;
  debuggeeEnded_ = true;
  if (status.signal)
    output(backends::OutputCategory::Console,
           "Process terminated by signal " + std::to_string(*status.signal) + " (" +
               backends::signalName(*status.signal) + ")\n");
  auto announce = [weak = weak_from_this(), code = status.exitCode] {
    auto self = weak.lock();
    if (!self || self->ended_) return;
    self->sendEvent("exited", json::value_from(protocol::ExitedEventBody{code}));
    self->sendEvent("terminated", json::value_from(protocol::TerminatedEventBody{}));
  };
  // The last of the program's GPU activity (and what the user must hear about it) comes first;
  // with nothing collecting this runs at once.
  if (auto* g = gpu()) return g->programEnded(std::move(announce));
  announce();
}

bool Session::congested() const { return connection_->congested(); }

void Session::whenWritable(std::function<void()> resume) {
  connection_->whenDrained(std::move(resume));
}

bool Session::canRunInTerminal() const { return client_.supportsRunInTerminalRequest.value_or(false); }

void Session::runInTerminal(const backends::TerminalLaunch& launch,
                            backends::Reply<backends::TerminalProcess> reply) {
  protocol::RunInTerminalRequestArguments args;
  args.kind = launch.console == backends::Console::ExternalTerminal ? "external" : "integrated";
  args.title = launch.title;
  args.cwd = launch.cwd;
  args.args = launch.argv;
  for (const auto& [k, v] : launch.env) args.env[k] = v;
  reverseRequest("runInTerminal", json::value_from(args),
                 [reply](Result<protocol::Response> r) {
                   if (!r) return reply(r.takeError());
                   auto body = protocol::decode<protocol::RunInTerminalResponseBody>(
                       r->body.is_null() ? json::value(json::object()) : r->body, "body");
                   if (!body) return reply(body.takeError());
                   reply(backends::TerminalProcess{body->processId, body->shellProcessId});
                 });
}

bool Session::canStartDebugging() const { return client_.supportsStartDebuggingRequest.value_or(false); }

void Session::startDebugging(const std::string& request, const std::string& configuration,
                             backends::Reply<void> reply) {
  boost::system::error_code ec;
  json::value config = json::parse(configuration, ec);
  if (ec || !config.is_object())
    return reply(Error{errors::kBadArguments, "a child session's configuration is not a JSON object", false});
  reverseRequest("startDebugging", json::object{{"request", request}, {"configuration", std::move(config)}},
                 [reply](Result<protocol::Response> r) {
                   if (!r) return reply(r.takeError());
                   if (!r->success)
                     return reply(Error{errors::kUnsupportedRequest,
                                        "the client refused the child session: " + r->message.value_or("no reason given"),
                                        false});
                   reply({});
                 });
}

void Session::reverseRequest(const std::string& command, json::value arguments,
                             std::function<void(Result<protocol::Response>)> onResponse) {
  std::int64_t seq = nextSeq_++;
  reverse_[seq] = std::move(onResponse);
  send(protocol::toJson(Request{seq, command, std::move(arguments)}));
}

}  // namespace strata::adapter
