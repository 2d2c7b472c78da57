// A debug session driven one short command at a time, for terminals and agents: `strata
// session` keeps one in a background process, `strata mcp` keeps several in its own. It drives
// strata-dap over DAP as an IDE does and answers each command when there is something to say:
// the program stopped, it ended, or the command's time ran out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "adapter/cli/dap_client.hpp"
#include "adapter/cli/stops.hpp"

namespace strata::cli {

// What to debug: a program to start, or a process to attach to.
struct SessionStart {
  std::vector<std::string> command;  // PROGRAM [ARGS...]; `python x.py ...` names the interpreter
  std::int64_t attachPid = 0;        // instead of a command
  std::string trace;                 // or a GPU trace to open, with no program
  std::string cwd, python, gpu, adapter;
  bool native = false;               // a Python program's C/C++ too (mixed mode)
  bool stopOnEntry = true;           // a started program stops before its first line
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<BreakSpec> breaks;
};

// One command's answer: a short text for a person or a model, and the same as data.
struct Answer {
  bool ok = true;
  std::string text;
  boost::json::object data;
  static Answer failure(std::string message);
};
using AnswerFn = std::function<void(Answer)>;

enum class Resume { Continue, Next, StepIn, StepOut };
using Millis = std::chrono::milliseconds;

class DebugSession {
 public:
  DebugSession(asio::io_context& io, std::string name);
  ~DebugSession();
  DebugSession(const DebugSession&) = delete;
  DebugSession& operator=(const DebugSession&) = delete;

  const std::string& name() const { return name_; }
  // Starts the adapter and the program (or attaches); answers at the first stop (the entry,
  // a breakpoint), the end of the program or `timeout`, or at once for an attach.
  void start(const SessionStart& spec, Millis timeout, AnswerFn done);
  void addBreak(const BreakSpec& b, AnswerFn done);
  // Every breakpoint (file ""), those of a file (line 0), or one.
  void clearBreaks(const std::string& file, std::int64_t line, AnswerFn done);
  // threadId 0: the thread that stopped last.
  void resume(Resume how, std::int64_t threadId, Millis timeout, AnswerFn done);
  void pause(Millis timeout, AnswerFn done);
  // Waits for a stop or the end without resuming.
  void wait(Millis timeout, AnswerFn done);
  void threads(AnswerFn done);
  void stack(std::int64_t threadId, std::int64_t levels, AnswerFn done);
  void locals(std::int64_t threadId, std::int64_t frame, AnswerFn done);
  void evaluate(const std::string& expression, std::int64_t threadId, std::int64_t frame, AnswerFn done);
  // A Debug Console command (`!gpu top`, `!sql ...`): its text.
  void console(const std::string& command, AnswerFn done);
  // Any request; the answer's data is the response body.
  void request(const std::string& command, boost::json::value arguments, AnswerFn done);
  // Ends the session: a started program is ended, an attached one runs on.
  void end(AnswerFn done);

  Answer status() const;
  bool over() const { return state_ == State::Over; }
  bool finished() const { return state_ == State::Exited || state_ == State::Over; }
  // Called when the program has ended or the adapter went away: nothing will stop any more.
  void onOver(std::function<void()> f) { onOver_ = std::move(f); }

 private:
  enum class State { Starting, Running, Stopped, Exited, Over };
  enum class WaitEnd { Stopped, Exited, TimedOut, Over };
  struct Waiter {
    std::shared_ptr<asio::steady_timer> timer;
    std::function<void(WaitEnd)> fire;
  };

  void onEvent(const protocol::Event& e);
  void onClosed();
  void takeFilters(const boost::json::object& capabilities);
  // Calls `then` at the next stop or end, or after `timeout`.
  void awaitStop(Millis timeout, std::function<void(WaitEnd)> then);
  void settle(WaitEnd end);
  // The answer a wait ends with: the stop (thread, frames, locals), the exit, or the time out.
  void answerWait(WaitEnd end, Millis timeout, AnswerFn done);
  void sendBreakpoints(const std::string& file, AnswerFn done);
  // The DAP frame id of frame `index` of a thread (0: the stopped one), or an error.
  void frameId(std::int64_t threadId, std::int64_t index, std::function<void(Result<std::int64_t>)> then);
  std::int64_t thread(std::int64_t given) const { return given ? given : stoppedThread_; }
  // The program's output since the last answer, put before `a`'s text and in its data.
  Answer withOutput(Answer a);
  bool needStopped(const AnswerFn& done) const;
  bool needAlive(const AnswerFn& done) const;
  std::string stateName() const;

  asio::io_context& io_;
  std::string name_;
  std::unique_ptr<DapClient> client_;
  State state_ = State::Starting;
  bool attached_ = false;
  bool waitsForStop_ = true;  // a started program: its start answers at the first stop
  std::string target_;  // what is debugged, in words
  std::int64_t pid_ = 0;
  std::int64_t stoppedThread_ = 0;
  boost::json::object lastStop_;
  std::optional<std::int64_t> exitCode_;
  std::string output_;
  std::map<std::string, std::vector<BreakSpec>> breaks_;  // by file, as sent
  std::vector<std::string> exceptionFilters_;             // the adapter's defaults
  std::list<Waiter> waiters_;
  std::function<void()> onOver_;
  std::shared_ptr<std::function<void()>> initialized_;  // configuration, run at `initialized`
};

// "45 ms", "3.2 s": how long.
std::string describeMillis(Millis m);

}  // namespace strata::cli
