// Test support for NativeDebugger: a recording of its callbacks, marker lines, output capture.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <doctest/doctest.h>

#include "strata/native/debugger/debugger.hpp"

namespace strata::native::debugger::testing {

using namespace std::chrono_literals;

template <class T>
T ok(std::future<Result<T>>&& f) {
  auto r = f.get();
  if (!r) FAIL("unexpected error: " << r.error().message);
  return std::move(r).value();
}
inline void ok(std::future<Result<void>>&& f) {
  auto r = f.get();
  if (!r) FAIL("unexpected error: " << r.error().message);
}

// The line of `// @bp:NAME` in a debuggee's source.
inline int lineOf(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find("// @bp:" + marker) != std::string::npos &&
        (text.size() == text.find("// @bp:" + marker) + 7 + marker.size()))
      return n;
  FAIL("no marker @bp:" << marker << " in " << source);
  return 0;
}

inline const std::string kSource = STRATA_DBG_SRC;
inline const std::string kPluginSource = STRATA_DBG_PLUGIN_SRC;
inline const std::string kShlibSource = STRATA_DBG_SHLIB_SRC;

class Session {
 public:
  using Event = std::variant<DebuggerStop, engine::ExitEvent>;

 private:
  // Declared before the debugger: its engine thread may still call back while it is destroyed.
  int out_[2] = {-1, -1};
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::vector<std::string> log_;
  std::vector<BreakpointPlacement> changed_;

 public:
  NativeDebugger debugger;
  pid_t pid = 0;

  // STRATA_TEST_ENGINE (ctest's native_debugger_remote): the engine in that strata-engine process.
  Session() : debugger(makeCallbacks(), std::getenv("STRATA_TEST_ENGINE") ? std::getenv("STRATA_TEST_ENGINE") : "") {}
  ~Session() {
    for (int fd : out_)
      if (fd >= 0) close(fd);
  }

  void launch(std::vector<std::string> args, std::string program = STRATA_DBG_TARGET) {
    REQUIRE(pipe2(out_, O_CLOEXEC) == 0);
    engine::LaunchOptions options;
    options.program = std::move(program);
    options.args = std::move(args);
    options.stdoutFd = out_[1];
    pid = ok(debugger.launch(std::move(options)));
    close(out_[1]);
    out_[1] = -1;
  }

  DebuggerStop stop(std::chrono::milliseconds timeout = 20s) {
    auto e = next(timeout);
    REQUIRE_MESSAGE(e.has_value(), "no stop within the timeout");
    if (auto* x = std::get_if<engine::ExitEvent>(&*e)) FAIL("expected a stop, the process " << x->description);
    return std::get<DebuggerStop>(*e);
  }
  engine::ExitEvent exit(std::chrono::milliseconds timeout = 20s) {
    auto e = next(timeout);
    REQUIRE_MESSAGE(e.has_value(), "no exit within the timeout");
    if (auto* s = std::get_if<DebuggerStop>(&*e))
      FAIL("expected an exit, got a stop: " << stopReasonName(s->reason) << " " << s->description);
    return std::get<engine::ExitEvent>(*e);
  }
  // Everything the program wrote, once it closed its stdout (exited).
  std::string output() {
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = read(out_[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    return text;
  }
  std::vector<std::string> logLines() {
    std::lock_guard lock(m_);
    return log_;
  }
  std::vector<BreakpointPlacement> changed() {
    std::lock_guard lock(m_);
    return changed_;
  }

  FrameEntry top(pid_t tid) {
    auto page = ok(debugger.stackTrace(tid, 0, 1));
    REQUIRE(!page.frames.empty());
    return page.frames[0];
  }
  // The value of a local of the given frame, as shown.
  std::string local(int frameId, const std::string& name) {
    auto scopes = ok(debugger.scopes(frameId));
    REQUIRE(!scopes.empty());
    for (auto& v : ok(debugger.variables(scopes[0].variablesReference)))
      if (v.name == name) return v.value;
    FAIL("no local " << name);
    return {};
  }

 private:
  Callbacks makeCallbacks() {
    Callbacks cb;
    cb.stopped = [this](const DebuggerStop& s) { push(s); };
    cb.exited = [this](const engine::ExitEvent& e) { push(e); };
    cb.output = [this](const std::string& line) {
      std::lock_guard lock(m_);
      log_.push_back(line);
    };
    cb.breakpointChanged = [this](const BreakpointPlacement& b) {
      std::lock_guard lock(m_);
      changed_.push_back(b);
    };
    return cb;
  }
  void push(Event e) {
    std::lock_guard lock(m_);
    events_.push_back(std::move(e));
    cv_.notify_all();
  }
  std::optional<Event> next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(m_);
    if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
    Event e = events_.front();
    events_.pop_front();
    return e;
  }
};

// Launches `mode` with one breakpoint on `marker` in kSource and returns its stop.
inline DebuggerStop runTo(Session& s, const std::string& mode, const std::string& marker, std::string condition = {}) {
  s.launch({mode});
  SourceBreakpoint bp{lineOf(kSource, marker)};
  bp.condition = std::move(condition);
  ok(s.debugger.setSourceBreakpoints(kSource, {bp}));
  ok(s.debugger.configurationDone(false));
  auto stop = s.stop();
  REQUIRE(stop.reason == DebuggerStopReason::Breakpoint);
  return stop;
}

}  // namespace strata::native::debugger::testing
