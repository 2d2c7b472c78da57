// The plain process runner.
#include "backends/process/process_backend.hpp"

#include <signal.h>

#include <fstream>

namespace strata::backends {

ProcessBackend::~ProcessBackend() {
  *alive_ = false;
  if (child_ && child_->running()) child_->detach();
}

void ProcessBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  programName_ = spec.displayName;
  if (spec.console != Console::Internal && host_.canRunInTerminal())
    return launchInTerminal(spec, std::move(reply));
  if (spec.console != Console::Internal)
    host_.output(OutputCategory::Console,
                 "The client cannot run programs in a terminal; its output appears here.\n");
  auto child = ChildProcess::spawn(io_, SpawnOptions{spec.argv, spec.cwd, spec.environment, true});
  if (!child) return reply(child.takeError());
  child_ = *child;
  std::weak_ptr<bool> alive = alive_;
  child_->start(ChildProcess::Callbacks{
      [this, alive](OutputCategory c, std::string text) {
        if (!alive.expired()) host_.output(c, std::move(text));
      },
      [this, alive] { return !alive.expired() && host_.congested(); },
      [this, alive](std::function<void()> resume) {
        if (!alive.expired()) host_.whenWritable(std::move(resume));
      },
      [this, alive](ExitStatus st) {
        if (!alive.expired()) finished(st);
      }});
  reply({});
  host_.processStarted(programName_, child_->pid(), true);
}

void ProcessBackend::launchInTerminal(const LaunchSpec& spec, Reply<void> reply) {
  auto session = TerminalSession::open(io_);
  if (!session) return reply(session.takeError());
  terminal_ = *session;
  TerminalLaunch t;
  t.console = spec.console;
  t.title = spec.displayName;
  t.cwd = spec.cwd;
  t.argv = {host_.adapterExecutable(), "--launcher", terminal_->socketPath(), "--"};
  t.argv.insert(t.argv.end(), spec.argv.begin(), spec.argv.end());
  // The terminal starts from the client's environment; send ours whole so the program sees
  // exactly what an internal-console launch would give it.
  for (const auto& e : spec.environment) {
    auto eq = e.find('=');
    if (eq != std::string::npos) t.env.emplace_back(e.substr(0, eq), e.substr(eq + 1));
  }
  auto shared = std::make_shared<Reply<void>>(std::move(reply));
  std::weak_ptr<bool> alive = alive_;
  terminal_->start(
      TerminalSession::Callbacks{
          [this, alive, shared](Result<std::int64_t> pid) {
            if (alive.expired()) return;
            if (!pid) {
              if (*shared) std::exchange(*shared, {})(pid.takeError());
              return;
            }
            if (*shared) std::exchange(*shared, {})({});
            host_.processStarted(programName_, *pid, true);
          },
          [this, alive](ExitStatus st) {
            if (!alive.expired()) finished(st);
          }},
      std::chrono::seconds(30));
  host_.runInTerminal(t, [this, alive, shared](Result<TerminalProcess> r) {
    if (alive.expired() || r.ok()) return;
    terminal_->fail("the client could not run the program in a terminal: " + r.error().message);
  });
}

void ProcessBackend::abandonStart() {
  // The launcher in the client's terminal finds no one to report to and starts nothing.
  if (terminal_ && terminal_->pid() == 0) terminal_->fail("the launch was cancelled");
}

void ProcessBackend::finished(const ExitStatus& status) {
  if (done_) return;
  done_ = true;
  host_.exited(status);
  for (auto& w : std::exchange(waitingForExit_, {})) w({});
}

pid_t ProcessBackend::pid() const {
  if (child_) return child_->pid();
  if (terminal_) return static_cast<pid_t>(terminal_->pid());
  return 0;
}

void ProcessBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  if (set.kind != BreakpointSet::Kind::Source) return unsupported(set, reply);
  std::vector<BreakpointReport> out;
  for (const auto& b : set.sources) {
    BreakpointReport r;
    r.line = b.line;
    r.message = "the program runs without debugging (noDebug)";
    out.push_back(std::move(r));
  }
  reply(std::move(out));
}

void ProcessBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  std::vector<ThreadInfo> out;
  if (pid() > 0 && !done_) {
    std::string name = programName_;
    std::ifstream comm("/proc/" + std::to_string(pid()) + "/comm");
    if (comm) std::getline(comm, name);
    out.push_back(ThreadInfo{pid(), name});
  }
  reply(std::move(out));
}

void ProcessBackend::terminate(bool force, Reply<void> reply) {
  if (done_ || pid() <= 0) return reply({});
  int signo = force ? SIGKILL : SIGTERM;
  if (child_) child_->signal(signo);
  else ::kill(pid(), signo);
  if (force) waitingForExit_.push_back(std::move(reply));
  else reply({});
}

void ProcessBackend::detach(Reply<void> reply) {
  if (child_ && !done_) child_->detach();
  done_ = true;
  reply({});
}

}  // namespace strata::backends
