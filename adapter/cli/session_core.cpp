// The debug session behind `strata session` and `strata mcp`.
#include "adapter/cli/session_core.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "adapter/cli/json_fields.hpp"

namespace strata::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kOutputKept = 16 * 1024;  // of the program's output between two answers
constexpr std::int64_t kVariablesShown = 100;

using namespace fields;

std::string frameFile(const json::object& frame) {
  auto* source = frame.if_contains("source");
  if (!source || !source->is_object()) return {};
  std::string path = str(source->get_object(), "path");
  return path.empty() ? str(source->get_object(), "name") : path;
}
std::string failureText(const protocol::Response& r, const std::string& what) {
  return what + " failed: " + r.message.value_or("no reason given");
}

}  // namespace

std::string describeMillis(Millis m) {
  if (m.count() < 1000) return std::to_string(m.count()) + " ms";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(m.count()) / 1000.0);
  return text;
}

Answer Answer::failure(std::string message) {
  Answer a;
  a.ok = false;
  a.data["error"] = message;
  a.text = std::move(message);
  return a;
}

DebugSession::DebugSession(asio::io_context& io, std::string name) : io_(io), name_(std::move(name)) {}

DebugSession::~DebugSession() {
  for (auto& w : waiters_) w.timer->cancel();
}

std::string DebugSession::stateName() const {
  switch (state_) {
    case State::Starting: return "starting";
    case State::Running: return "running";
    case State::Stopped: return "stopped";
    case State::Exited: return "exited";
    case State::Over: return "over";
  }
  return "?";
}

Answer DebugSession::status() const {
  Answer a;
  a.data = {{"session", name_}, {"target", target_}, {"state", stateName()}};
  if (pid_) a.data["pid"] = pid_;
  if (exitCode_) a.data["exitCode"] = *exitCode_;
  a.text = name_ + ": " + target_;
  if (pid_) a.text += " (process " + std::to_string(pid_) + ")";
  a.text += ", " + stateName();
  if (state_ == State::Stopped) {
    a.data["threadId"] = stoppedThread_;
    a.data["reason"] = str(lastStop_, "reason");
    a.text += " (" + str(lastStop_, "reason") + ", thread " + std::to_string(stoppedThread_) + ")";
  }
  if (exitCode_) a.text += " with code " + std::to_string(*exitCode_);
  return a;
}

Answer DebugSession::withOutput(Answer a) {
  if (output_.empty()) return a;
  a.data["output"] = output_;
  std::string text = output_;
  if (text.back() != '\n') text += '\n';
  a.text = text + a.text;
  output_.clear();
  return a;
}

bool DebugSession::needAlive(const AnswerFn& done) const {
  if (state_ == State::Over) {
    done(Answer::failure("session " + name_ + " is over: the debug adapter is gone"));
    return false;
  }
  if (state_ == State::Exited) {
    done(Answer::failure("the program has exited" +
                         (exitCode_ ? " with code " + std::to_string(*exitCode_) : std::string()) +
                         ": end the session (strata session end), or start another"));
    return false;
  }
  return true;
}

bool DebugSession::needStopped(const AnswerFn& done) const {
  if (!needAlive(done)) return false;
  if (state_ != State::Stopped) {
    done(Answer::failure("the program is " + stateName() + ", not stopped: pause it first (strata pause), or wait "
                         "for a breakpoint (strata wait)"));
    return false;
  }
  return true;
}

void DebugSession::start(const SessionStart& spec, Millis timeout, AnswerFn done) {
  client_ = std::make_unique<DapClient>(io_);
  if (auto started = client_->spawn(spec.adapter.empty() ? siblingAdapter() : spec.adapter); !started) {
    state_ = State::Over;
    return done(Answer::failure(started.error().message));
  }
  client_->onEvent([this](const protocol::Event& e) { onEvent(e); });
  client_->onClosed([this] { onClosed(); });
  for (const auto& b : spec.breaks) breaks_[b.file].push_back(b);
  attached_ = spec.attachPid != 0;
  waitsForStop_ = !attached_ && spec.trace.empty();

  json::object config;
  std::string command;
  if (attached_) {
    command = "attach";
    config = {{"processId", spec.attachPid}};
    target_ = "process " + std::to_string(spec.attachPid);
    pid_ = spec.attachPid;
  } else if (!spec.trace.empty()) {
    command = "launch";
    config = {{"trace", spec.trace}};
    target_ = spec.trace;
  } else {
    command = "launch";
    // `python x.py args`: the interpreter named first, the script after it.
    std::size_t first = 0;
    std::string python = spec.python;
    std::string name = fs::path(spec.command.front()).filename().string();
    if (spec.command.size() >= 2 && name.rfind("python", 0) == 0 &&
        name.find_first_not_of("0123456789.", 6) == std::string::npos) {
      python = spec.command.front();
      first = 1;
    }
    config = {{"program", spec.command[first]}, {"stopOnEntry", spec.stopOnEntry}};
    json::array args;
    for (std::size_t i = first + 1; i < spec.command.size(); ++i) args.emplace_back(spec.command[i]);
    config["args"] = std::move(args);
    std::error_code ec;
    config["cwd"] = spec.cwd.empty() ? fs::current_path(ec).string() : spec.cwd;
    if (!python.empty()) config["python"] = python;
    if (!spec.gpu.empty()) config["gpu"] = spec.gpu;
    if (!spec.env.empty()) {
      json::object env;
      for (const auto& [k, v] : spec.env) env[k] = v;
      config["env"] = std::move(env);
    }
    target_ = spec.command[first];
  }
  if (spec.native) config["native"] = true;

  // The answer comes at the first stop or the end (a launch), or once configured (an attach).
  auto answered = std::make_shared<bool>(false);
  auto answer = [this, answered, done](Answer a) {
    if (*answered) return;
    *answered = true;
    done(std::move(a));
  };
  if (waitsForStop_) awaitStop(timeout, [this, timeout, answer](WaitEnd end) { answerWait(end, timeout, answer); });

  json::object init{{"clientID", "strata-session"}, {"clientName", "strata"}, {"adapterID", "strata"},
                    {"linesStartAt1", true}, {"columnsStartAt1", true}, {"pathFormat", "path"},
                    {"supportsRunInTerminalRequest", false}};
  client_->request("initialize", init, [this, command, config, answer](const protocol::Response& r) {
    if (!r.success) return answer(Answer::failure(failureText(r, "initialize")));
    takeFilters(obj(r.body));
    client_->request(command, config, [this, command, answer](const protocol::Response& r) {
      if (!r.success) {
        state_ = State::Exited;
        answer(withOutput(Answer::failure(failureText(r, command))));
        return settle(WaitEnd::Exited);  // the start's own wait, answered above
      }
      if (state_ == State::Starting) state_ = State::Running;
    });
  });
  // Configuration, as DAP has it: breakpoints once the adapter says it is ready.
  auto configure = std::make_shared<std::function<void()>>();
  *configure = [this, answer] {
    auto remaining = std::make_shared<std::size_t>(breaks_.size() + 2);
    auto problems = std::make_shared<std::string>();
    auto next = [this, remaining, problems, answer] {
      if (--*remaining) return;
      client_->request("configurationDone", nullptr, [this, problems, answer](const protocol::Response& r) {
        if (!r.success) return answer(Answer::failure(failureText(r, "configurationDone")));
        if (waitsForStop_) return;
        Answer a = status();
        a.text = attached_ ? "attached to " + target_ + "; it runs on (strata pause stops it)\n" + *problems
                           : "opened " + target_ + " (strata gpu top, strata gpu kernel ID)\n";
        answer(withOutput(std::move(a)));
      });
    };
    json::array filters;
    for (const auto& f : exceptionFilters_) filters.emplace_back(f);
    client_->request("setExceptionBreakpoints", json::object{{"filters", std::move(filters)}},
                     [problems, next](const protocol::Response& r) {
                       if (!r.success) *problems += failureText(r, "setExceptionBreakpoints") + "\n";
                       next();
                     });
    for (const auto& [file, _] : breaks_)
      sendBreakpoints(file, [problems, next](Answer a) {
        if (!a.ok || a.data.contains("problems")) *problems += a.text;
        next();
      });
    next();
  };
  initialized_ = configure;
}

void DebugSession::onEvent(const protocol::Event& e) {
  const auto& body = obj(e.body);
  if (e.event == "capabilities") {
    // The backend's own, known once the program is launched: its exception filters among them.
    takeFilters(obj(body.contains("capabilities") ? body.at("capabilities") : json::value()));
  } else if (e.event == "initialized") {
    if (initialized_) {
      auto f = std::move(initialized_);
      (*f)();
    }
  } else if (e.event == "output") {
    std::string category = str(body, "category");
    if (category == "telemetry") return;
    output_ += str(body, "output");
    if (output_.size() > kOutputKept) output_ = "[...]\n" + output_.substr(output_.size() - kOutputKept);
  } else if (e.event == "process") {
    if (auto pid = num(body, "systemProcessId")) pid_ = pid;
  } else if (e.event == "stopped") {
    state_ = State::Stopped;
    stoppedThread_ = num(body, "threadId");
    lastStop_ = body;
    settle(WaitEnd::Stopped);
  } else if (e.event == "continued") {
    if (state_ == State::Stopped) state_ = State::Running;
  } else if (e.event == "exited") {
    exitCode_ = num(body, "exitCode");
  } else if (e.event == "terminated") {
    if (state_ != State::Over) state_ = State::Exited;
    settle(WaitEnd::Exited);
    if (onOver_) asio::post(io_, onOver_);
  }
}

void DebugSession::takeFilters(const json::object& capabilities) {
  // The exception filters the adapter turns on by default, sent as an IDE sends them.
  for (const auto& f : arr(capabilities, "exceptionBreakpointFilters")) {
    auto* on = obj(f).if_contains("default");
    std::string name = str(obj(f), "filter");
    if (on && on->is_bool() && on->get_bool() &&
        std::find(exceptionFilters_.begin(), exceptionFilters_.end(), name) == exceptionFilters_.end())
      exceptionFilters_.push_back(name);
  }
}

void DebugSession::onClosed() {
  state_ = State::Over;
  settle(WaitEnd::Over);
  if (onOver_) asio::post(io_, onOver_);
}

void DebugSession::awaitStop(Millis timeout, std::function<void(WaitEnd)> then) {
  auto timer = std::make_shared<asio::steady_timer>(io_, timeout);
  auto it = waiters_.insert(waiters_.end(), Waiter{timer, std::move(then)});
  timer->async_wait([this, timer, it](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the waiter was settled (or the session is going away)
    auto fire = std::move(it->fire);
    waiters_.erase(it);
    fire(WaitEnd::TimedOut);
  });
}

void DebugSession::settle(WaitEnd end) {
  auto waiting = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiting) {
    w.timer->cancel();
    w.fire(end);
  }
}

void DebugSession::answerWait(WaitEnd end, Millis timeout, AnswerFn done) {
  switch (end) {
    case WaitEnd::Stopped:
      return gatherStop(*client_, lastStop_, [this, done](std::shared_ptr<StopView> stop) {
        Answer a;
        a.text = stopText(*stop);
        a.data = stopJson(*stop);
        a.data.erase("type");
        a.data["state"] = "stopped";
        a.data["session"] = name_;
        done(withOutput(std::move(a)));
      });
    case WaitEnd::Exited: {
      Answer a = status();
      a.text = target_ + " exited" + (exitCode_ ? " with code " + std::to_string(*exitCode_) : std::string());
      return done(withOutput(std::move(a)));
    }
    case WaitEnd::TimedOut: {
      Answer a = status();
      a.text = "still running after " + describeMillis(timeout) +
               " (strata pause stops it; strata wait waits for a breakpoint again)";
      return done(withOutput(std::move(a)));
    }
    case WaitEnd::Over:
      return done(withOutput(Answer::failure("the debug adapter went away: session " + name_ + " is over")));
  }
}

void DebugSession::sendBreakpoints(const std::string& file, AnswerFn done) {
  json::array bps;
  for (const auto& b : breaks_[file]) {
    json::object bp{{"line", b.line}};
    if (b.condition) bp["condition"] = *b.condition;
    bps.push_back(std::move(bp));
  }
  json::object args{{"source", json::object{{"path", file}}}, {"breakpoints", bps}};
  client_->request("setBreakpoints", std::move(args), [this, file, done](const protocol::Response& r) {
    if (!r.success) return done(Answer::failure(failureText(r, "breakpoints in " + file)));
    Answer a;
    json::array placed, problems;
    const auto& got = arr(obj(r.body), "breakpoints");
    const auto& asked = breaks_[file];
    for (std::size_t i = 0; i < got.size(); ++i) {
      const auto& b = obj(got[i]);
      json::object p{{"file", file}, {"line", b.contains("line") ? num(b, "line") : (i < asked.size() ? asked[i].line : 0)}};
      auto* verified = b.if_contains("verified");
      bool ok = verified && verified->is_bool() && verified->get_bool();
      p["verified"] = ok;
      if (!str(b, "message").empty()) p["message"] = str(b, "message");
      if (i < asked.size() && asked[i].condition) p["condition"] = *asked[i].condition;
      std::string where = fs::path(file).filename().string() + ":" + std::to_string(num(p, "line"));
      if (ok) {
        a.text += "breakpoint at " + where + "\n";
      } else {
        std::string why = str(b, "message").empty() ? str(b, "reason") : str(b, "message");
        a.text += "breakpoint at " + where + " is not set yet" + (why.empty() ? "" : ": " + why) + "\n";
        problems.push_back(p);
      }
      placed.push_back(std::move(p));
    }
    a.data["breakpoints"] = std::move(placed);
    if (!problems.empty()) a.data["problems"] = std::move(problems);
    done(std::move(a));
  });
}

void DebugSession::addBreak(const BreakSpec& b, AnswerFn done) {
  if (!needAlive(done)) return;
  breaks_[b.file].push_back(b);
  sendBreakpoints(b.file, [this, b, done](Answer a) {
    if (!a.ok) breaks_[b.file].pop_back();
    done(withOutput(std::move(a)));
  });
}

void DebugSession::clearBreaks(const std::string& file, std::int64_t line, AnswerFn done) {
  if (!needAlive(done)) return;
  std::vector<std::string> files;
  for (auto& [f, list] : breaks_) {
    if (!file.empty() && f != file) continue;
    std::erase_if(list, [line](const BreakSpec& b) { return line == 0 || b.line == line; });
    files.push_back(f);
  }
  if (files.empty()) return done(Answer::failure("no breakpoints" + (file.empty() ? std::string() : " in " + file)));
  auto remaining = std::make_shared<std::size_t>(files.size());
  auto total = std::make_shared<Answer>();
  total->text = "cleared\n";
  for (const auto& f : files)
    sendBreakpoints(f, [this, f, remaining, total, done](Answer a) {
      if (!a.ok) total->ok = false, total->text += a.text + "\n";
      if (breaks_[f].empty()) breaks_.erase(f);
      if (--*remaining == 0) {
        json::array left;
        for (const auto& [file, list] : breaks_)
          for (const auto& b : list) left.push_back(json::object{{"file", file}, {"line", b.line}});
        total->data["breakpoints"] = std::move(left);
        done(withOutput(std::move(*total)));
      }
    });
}

void DebugSession::resume(Resume how, std::int64_t threadId, Millis timeout, AnswerFn done) {
  if (!needStopped(done)) return;
  static constexpr const char* kCommands[] = {"continue", "next", "stepIn", "stepOut"};
  const char* command = kCommands[static_cast<int>(how)];
  // Waiting before asking: the stop can come before the response.
  auto answered = std::make_shared<bool>(false);
  auto answer = [answered, done](Answer a) {
    if (*answered) return;
    *answered = true;
    done(std::move(a));
  };
  awaitStop(timeout, [this, timeout, answer](WaitEnd end) { answerWait(end, timeout, answer); });
  json::object args{{"threadId", thread(threadId)}};
  state_ = State::Running;
  client_->request(command, std::move(args), [this, command, answer](const protocol::Response& r) {
    if (r.success) return;
    state_ = State::Stopped;
    settle(WaitEnd::Stopped);  // hands the waiter the stop it still is at
    answer(Answer::failure(failureText(r, command)));
  });
}

void DebugSession::pause(Millis timeout, AnswerFn done) {
  if (!needAlive(done)) return;
  if (state_ == State::Stopped) return answerWait(WaitEnd::Stopped, timeout, done);
  awaitStop(timeout, [this, timeout, done](WaitEnd end) { answerWait(end, timeout, done); });
  client_->request("pause", json::object{{"threadId", stoppedThread_}}, [](const protocol::Response&) {});
}

void DebugSession::wait(Millis timeout, AnswerFn done) {
  if (!needAlive(done)) return;
  if (state_ == State::Stopped) return answerWait(WaitEnd::Stopped, timeout, done);
  awaitStop(timeout, [this, timeout, done](WaitEnd end) { answerWait(end, timeout, done); });
}

void DebugSession::threads(AnswerFn done) {
  if (!needAlive(done)) return;
  client_->request("threads", nullptr, [this, done](const protocol::Response& r) {
    if (!r.success) return done(Answer::failure(failureText(r, "threads")));
    Answer a;
    json::array list;
    for (const auto& t : arr(obj(r.body), "threads")) {
      std::int64_t id = num(obj(t), "id");
      bool stopped = state_ == State::Stopped && id == stoppedThread_;
      a.text += std::string(stopped ? "* " : "  ") + std::to_string(id) + " " + str(obj(t), "name") +
                (stopped ? " (stopped: " + str(lastStop_, "reason") + ")" : "") + "\n";
      list.push_back(json::object{{"id", id}, {"name", str(obj(t), "name")}, {"stoppedHere", stopped}});
    }
    a.data["threads"] = std::move(list);
    a.data["state"] = stateName();
    done(withOutput(std::move(a)));
  });
}

void DebugSession::stack(std::int64_t threadId, std::int64_t levels, AnswerFn done) {
  if (!needStopped(done)) return;
  json::object args{{"threadId", thread(threadId)}, {"startFrame", 0}, {"levels", levels}};
  client_->request("stackTrace", std::move(args), [this, threadId, done](const protocol::Response& r) {
    if (!r.success) return done(Answer::failure(failureText(r, "stackTrace")));
    Answer a;
    json::array frames;
    std::int64_t index = 0;
    for (const auto& f : arr(obj(r.body), "stackFrames")) {
      const auto& fo = obj(f);
      std::string file = frameFile(fo);
      a.text += "#" + std::to_string(index) + " " + str(fo, "name");
      if (!file.empty()) a.text += " at " + file + ":" + std::to_string(num(fo, "line"));
      a.text += "\n";
      json::object frame{{"index", index++}, {"name", str(fo, "name")}, {"file", file}, {"line", num(fo, "line")}};
      if (!str(fo, "presentationHint").empty()) frame["hint"] = str(fo, "presentationHint");
      frames.push_back(std::move(frame));
    }
    if (auto total = num(obj(r.body), "totalFrames"); total > index)
      a.text += "(" + std::to_string(total - index) + " more frames: --levels N shows them)\n";
    a.data = {{"threadId", thread(threadId)}, {"frames", std::move(frames)}};
    done(withOutput(std::move(a)));
  });
}

void DebugSession::frameId(std::int64_t threadId, std::int64_t index, std::function<void(Result<std::int64_t>)> then) {
  json::object args{{"threadId", thread(threadId)}, {"startFrame", index}, {"levels", 1}};
  client_->request("stackTrace", std::move(args), [index, then](const protocol::Response& r) {
    if (!r.success) return then(Error{errors::kBadArguments, failureText(r, "stackTrace"), true});
    const auto& frames = arr(obj(r.body), "stackFrames");
    if (frames.empty())
      return then(Error{errors::kBadArguments, "the stack has no frame #" + std::to_string(index) + " (strata stack lists them)", true});
    then(num(obj(frames[0]), "id"));
  });
}

void DebugSession::locals(std::int64_t threadId, std::int64_t frame, AnswerFn done) {
  if (!needStopped(done)) return;
  frameId(threadId, frame, [this, frame, done](Result<std::int64_t> id) {
    if (!id) return done(Answer::failure(id.error().message));
    client_->request("scopes", json::object{{"frameId", *id}}, [this, frame, done](const protocol::Response& r) {
      if (!r.success) return done(Answer::failure(failureText(r, "scopes")));
      const auto& scopes = arr(obj(r.body), "scopes");
      if (scopes.empty()) return done(Answer::failure("frame #" + std::to_string(frame) + " has no variables"));
      std::string scope = str(obj(scopes[0]), "name");
      json::object args{{"variablesReference", num(obj(scopes[0]), "variablesReference")}, {"start", 0}, {"count", kVariablesShown}};
      client_->request("variables", std::move(args), [this, frame, scope, done](const protocol::Response& r) {
        if (!r.success) return done(Answer::failure(failureText(r, "variables")));
        Answer a;
        a.text = scope + " of frame #" + std::to_string(frame) + ":\n";
        json::array vars;
        for (const auto& v : arr(obj(r.body), "variables")) {
          const auto& vo = obj(v);
          a.text += "  " + str(vo, "name") + " = " + str(vo, "value");
          if (!str(vo, "type").empty()) a.text += "  (" + str(vo, "type") + ")";
          a.text += "\n";
          vars.push_back(json::object{{"name", str(vo, "name")}, {"value", str(vo, "value")}, {"type", str(vo, "type")}});
        }
        if (vars.empty()) a.text += "  (none)\n";
        a.data = {{"frame", frame}, {"scope", scope}, {"variables", std::move(vars)}};
        done(withOutput(std::move(a)));
      });
    });
  });
}

void DebugSession::evaluate(const std::string& expression, std::int64_t threadId, std::int64_t frame, AnswerFn done) {
  if (!needAlive(done)) return;
  auto ask = [this, expression, done](std::optional<std::int64_t> id) {
    json::object args{{"expression", expression}, {"context", "repl"}};
    if (id) args["frameId"] = *id;
    client_->request("evaluate", std::move(args), [this, expression, done](const protocol::Response& r) {
      if (!r.success) return done(withOutput(Answer::failure(r.message.value_or("evaluation failed"))));
      Answer a;
      const auto& b = obj(r.body);
      a.text = str(b, "result") + "\n";
      a.data = {{"expression", expression}, {"result", str(b, "result")}};
      if (!str(b, "type").empty()) a.data["type"] = str(b, "type");
      done(withOutput(std::move(a)));
    });
  };
  if (state_ != State::Stopped) return ask(std::nullopt);
  frameId(threadId, frame, [ask, done](Result<std::int64_t> id) {
    if (!id) return done(Answer::failure(id.error().message));
    ask(*id);
  });
}

void DebugSession::console(const std::string& command, AnswerFn done) {
  if (!needAlive(done)) return;
  client_->request("evaluate", json::object{{"expression", command}, {"context", "repl"}},
                   [this, done](const protocol::Response& r) {
                     if (!r.success) return done(withOutput(Answer::failure(r.message.value_or("the command failed"))));
                     Answer a;
                     a.text = str(obj(r.body), "result");
                     if (!a.text.empty() && a.text.back() != '\n') a.text += '\n';
                     a.data["result"] = str(obj(r.body), "result");
                     done(withOutput(std::move(a)));
                   });
}

void DebugSession::request(const std::string& command, json::value arguments, AnswerFn done) {
  if (state_ == State::Over) return done(Answer::failure("session " + name_ + " is over"));
  client_->request(command, std::move(arguments), [command, done](const protocol::Response& r) {
    if (!r.success) return done(Answer::failure(failureText(r, command)));
    Answer a;
    if (r.body.is_object()) a.data = r.body.get_object();
    done(std::move(a));
  });
}

void DebugSession::end(AnswerFn done) {
  if (state_ == State::Over || !client_) {
    Answer a = status();
    a.text = "session " + name_ + " ended";
    return done(std::move(a));
  }
  bool terminate = !attached_;
  const bool hadExited = state_ == State::Exited;  // before the disconnect ends it
  client_->request("disconnect", json::object{{"terminateDebuggee", terminate}},
                   [this, terminate, hadExited, done](const protocol::Response&) {
                     Answer a = status();
                     a.text = "session " + name_ + " ended: " +
                              (hadExited   ? target_ + " had exited"
                               : terminate ? target_ + " was ended"
                                           : target_ + " runs on, detached");
                     a = withOutput(std::move(a));
                     client_->close();
                     done(std::move(a));
                   });
}

}  // namespace strata::cli
