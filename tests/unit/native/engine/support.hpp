// Test support for the ptrace engine: a sink recording events, symbol addresses, output capture.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include <doctest/doctest.h>

#include "elf_symtab.hpp"
#include "strata/native/engine/engine.hpp"

namespace strata::native::engine::testing {

using namespace std::chrono_literals;

template <class T>
T ok(Result<T>&& r) {
  if (!r) FAIL("unexpected error: " << r.error().message);
  return std::move(r).value();
}
inline void ok(Result<void>&& r) {
  if (!r) FAIL("unexpected error: " << r.error().message);
}
template <class T>
T ok(std::future<Result<T>>&& f) {
  return ok(f.get());
}
inline void ok(std::future<Result<void>>&& f) { ok(f.get()); }

// Records events; waiting is bounded so a broken engine fails a test instead of hanging it.
class RecordingSink : public EventSink {
 public:
  using Event = std::variant<EngineStop, ExitEvent>;

  std::function<void(const LibraryEvent&)> onLibrariesHook;
  std::function<void(const EngineStop&)> onStoppedHook;
  std::vector<LoadedObject> objects;  // every object added, in order
  std::atomic<int> threadsStarted{0};
  std::atomic<int> threadsExited{0};

  void onThreadStarted(pid_t, pid_t) override { ++threadsStarted; }
  void onThreadExited(pid_t, pid_t) override { ++threadsExited; }
  std::atomic<int> usr1Signals{0};
  void onSignal(pid_t, pid_t, int signo) override {
    if (signo == SIGUSR1) ++usr1Signals;
  }

  void onStopped(const EngineStop& e) override {
    if (onStoppedHook) onStoppedHook(e);
    push(e);
  }
  void onExited(const ExitEvent& e) override { push(e); }
  void onLibraries(const LibraryEvent& e) override {
    {
      std::lock_guard lock(m_);
      objects.insert(objects.end(), e.added.begin(), e.added.end());
    }
    if (onLibrariesHook) onLibrariesHook(e);
  }

  std::optional<Event> next(std::chrono::milliseconds timeout = 10s) {
    std::unique_lock lock(m_);
    if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
    Event e = events_.front();
    events_.pop_front();
    return e;
  }
  EngineStop stop(std::chrono::milliseconds timeout = 10s) {
    auto e = next(timeout);
    REQUIRE_MESSAGE(e.has_value(), "no event within the timeout");
    if (auto* x = std::get_if<ExitEvent>(&*e)) FAIL("expected a stop, the process " << x->description);
    return std::get<EngineStop>(*e);
  }
  ExitEvent exit(std::chrono::milliseconds timeout = 10s) {
    auto e = next(timeout);
    REQUIRE_MESSAGE(e.has_value(), "no event within the timeout");
    if (auto* s = std::get_if<EngineStop>(&*e)) FAIL("expected an exit, got a stop: " << reasonName(s->reason));
    return std::get<ExitEvent>(*e);
  }
  std::optional<LoadedObject> object(const std::string& suffix) {
    std::lock_guard lock(m_);
    for (auto& o : objects)
      if (o.path.size() >= suffix.size() && o.path.compare(o.path.size() - suffix.size(), suffix.size(), suffix) == 0)
        return o;
    return std::nullopt;
  }

 private:
  void push(Event e) {
    std::lock_guard lock(m_);
    events_.push_back(std::move(e));
    cv_.notify_all();
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Event> events_;
};

// Runtime address of `symbol` in the executable `path`, from the load bias the engine reported.
inline std::uint64_t runtimeAddress(RecordingSink& sink, const std::string& path, const std::string& symbol) {
  auto bias = sink.object(path.substr(path.rfind('/')));
  REQUIRE_MESSAGE(bias.has_value(), "no loaded object " << path);
  return bias->loadBias + ok(elfSymbol(path, symbol));
}

// A pipe whose read end collects everything the child writes, read after it exits.
struct Capture {
  int fds[2] = {-1, -1};
  Capture() { REQUIRE(pipe2(fds, O_CLOEXEC) == 0); }
  ~Capture() {
    for (int fd : fds)
      if (fd >= 0) close(fd);
  }
  int writeEnd() const { return fds[1]; }
  std::string readAll() {
    if (fds[1] >= 0) {
      close(fds[1]);
      fds[1] = -1;
    }
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
};

// Runs a program without any debugger: its stdout and exit code, the reference for detach tests.
inline std::pair<std::string, int> runPlain(const std::string& program, std::vector<std::string> args = {}) {
  Capture out;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out.writeEnd(), 1);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  std::string text = out.readAll();
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

}  // namespace strata::native::engine::testing

namespace doctest {
template <>
struct StringMaker<strata::native::engine::EngineStopReason> {
  static String convert(strata::native::engine::EngineStopReason reason) { return strata::native::engine::reasonName(reason); }
};
}  // namespace doctest
