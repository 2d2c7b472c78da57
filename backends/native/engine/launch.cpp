// Starting to debug a process: launch an ELF stopped at its first instruction, or attach by pid.
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "engine_impl.hpp"

namespace strata::native::engine {

namespace {

// Forks are traced only long enough to take our breakpoints out of the child and let it go.
constexpr long kAttachOptions =
    PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
// No EXITKILL for attach: if the adapter dies, the program it attached to lives on.
constexpr long kLaunchOptions = kAttachOptions | PTRACE_O_EXITKILL;

Result<std::string> resolveProgram(const std::string& program) {
  if (program.empty()) return Error{errors::kProgramNotFound, "launch: no program given", true};
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) != 0)
      return errnoError(errno == ENOENT ? errors::kProgramNotFound : errors::kProgramNotExecutable, "launch " + program);
    return program;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Error{errors::kProgramNotFound, "launch " + program + ": not found in PATH", true};
}

std::vector<pid_t> listTasks(pid_t pid) {
  std::vector<pid_t> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return tids;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') tids.push_back(std::atoi(e->d_name));
  }
  closedir(d);
  return tids;
}

}  // namespace

Result<pid_t> Engine::Impl::doLaunch(const LaunchOptions& options) {
  if (proc) return Error{errors::kAlreadyDebugging, "launch: a process is already being debugged", true};
  auto path = resolveProgram(options.program);
  if (!path) return path.takeError();

  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argStrings{options.program};
  argStrings.insert(argStrings.end(), options.args.begin(), options.args.end());
  std::vector<char*> argv;
  for (auto& a : argStrings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envStrings;
  std::vector<char*> envp;
  if (options.env) {
    envStrings = *options.env;
    for (auto& e : envStrings) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  char** envArray = options.env ? envp.data() : environ;

  int handshake[2];
  int failure[2];
  if (pipe2(handshake, O_CLOEXEC) != 0) return errnoError(errors::kSystemCallFailed, "launch: pipe");
  if (pipe2(failure, O_CLOEXEC) != 0) {
    int err = errno;
    close(handshake[0]);
    close(handshake[1]);
    return errnoError(errors::kSystemCallFailed, "launch: pipe", err);
  }

  pid_t child = fork();
  if (child < 0) {
    int err = errno;
    for (int fd : {handshake[0], handshake[1], failure[0], failure[1]}) close(fd);
    return errnoError(errors::kSystemCallFailed, "launch: fork", err);
  }
  if (child == 0) {
    auto fail = [&](int stage) {
      int report[2] = {stage, errno};
      (void)!write(failure[1], report, sizeof report);
      _exit(127);
    };
    // Wait until the engine has seized us: the exec is then the first thing it sees, and a
    // failure below is seen as an exit of a traced child, never as a refused seize.
    char go = 0;
    if (read(handshake[0], &go, 1) != 1) _exit(127);
    // The adapter's signal mask and ignored signals (SIGPIPE, typically) are not the
    // program's: it starts as from a shell.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig)
      if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
    int in = options.stdinFd >= 0 ? options.stdinFd : open("/dev/null", O_RDONLY);
    if (in < 0) fail(1);
    if (dup2(in, 0) < 0) fail(1);
    if (options.stdoutFd >= 0 && dup2(options.stdoutFd, 1) < 0) fail(2);
    if (options.stderrFd >= 0 && dup2(options.stderrFd, 2) < 0) fail(2);
    close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);  // the program inherits stdio, nothing else
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) fail(3);
    execve(path->c_str(), argv.data(), envArray);
    fail(4);
  }
  close(handshake[0]);
  close(failure[1]);
  // Each descriptor closed exactly once: a second close could hit another thread's file.
  int go = handshake[1];
  int failed = failure[0];
  auto closeOnce = [](int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  };
  auto abandon = [&](Error error) -> Result<pid_t> {
    ::kill(child, SIGKILL);
    int st = 0;
    while (waitpid(child, &st, __WALL) < 0 && errno == EINTR) {
    }
    closeOnce(go);
    closeOnce(failed);
    return error;
  };
  if (ptrace(PTRACE_SEIZE, child, nullptr, kLaunchOptions) != 0)
    return abandon(errnoError(errors::kPtraceFailed, "launch " + *path + ": PTRACE_SEIZE"));
  if (write(go, "g", 1) != 1) return abandon(errnoError(errors::kSystemCallFailed, "launch " + *path + ": handshake"));
  closeOnce(go);

  for (;;) {
    int status = 0;
    pid_t p = waitpid(child, &status, __WALL);
    if (p < 0) {
      if (errno == EINTR) continue;
      return abandon(errnoError(errors::kPtraceFailed, "launch " + *path + ": waitpid"));
    }
    if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC) break;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      int report[2] = {0, 0};
      ssize_t n = read(failed, report, sizeof report);
      closeOnce(failed);
      if (n == sizeof report) {
        std::string stage = report[0] == 1   ? "open /dev/null as stdin"
                            : report[0] == 2 ? "redirect output"
                            : report[0] == 3 ? "chdir to " + options.cwd
                                             : "execve";
        return errnoError(errors::kStartFailed, "launch " + *path + ": " + stage, report[1]);
      }
      return Error{errors::kStartFailed, "launch " + *path + ": the process ended before it started", true};
    }
    // Exit stops of a failed exec, stray stops: let it go on towards exec or exit.
    int sig = (WIFSTOPPED(status) && (status >> 16) == 0 && WSTOPSIG(status) != SIGSTOP) ? WSTOPSIG(status) : 0;
    if (ptrace(PTRACE_CONT, child, nullptr, sig) != 0 && errno != ESRCH)
      return abandon(errnoError(errors::kPtraceFailed, "launch " + *path + ": PTRACE_CONT"));
  }
  closeOnce(failed);

  proc.emplace();
  siteChanged(0, -2);
  proc->pid = child;
  proc->launched = true;
  Thread& leader = proc->threads[child];
  leader.tid = child;
  leader.stopped = true;
  currentPid = child;
  if (auto r = openMemory(); !r) {
    (void)doKill();
    return r.takeError();
  }
  if (auto r = initRendezvousAtExec(); !r) {
    (void)doKill();
    return r.takeError();
  }
  if (!proc) return Error{errors::kStartFailed, "launch " + *path + ": the process ended during start-up", true};
  queueStop(proc->threads[child], stopOf(EngineStopReason::Entry));
  reportStop(proc->threads[child]);
  return child;
}

Result<void> Engine::Impl::seizeAll(pid_t pid) {
  std::set<pid_t> seized;
  // Threads may be created while we seize; seized ones report their own clones, so a pass
  // that finds nothing new means every thread is ours.
  for (bool found = true; found;) {
    found = false;
    for (pid_t tid : listTasks(pid)) {
      if (seized.count(tid)) continue;
      found = true;
      if (ptrace(PTRACE_SEIZE, tid, nullptr, kAttachOptions) != 0) {
        int err = errno;
        if (tid != pid && err == ESRCH) continue;  // the thread exited meanwhile
        for (pid_t t : seized) (void)ptrace(PTRACE_DETACH, t, nullptr, 0);
        return attachError(pid, err);
      }
      seized.insert(tid);
      if (!proc->threads.count(tid)) {
        Thread& t = proc->threads[tid];
        t.tid = tid;
      }
    }
  }
  return {};
}

Result<void> Engine::Impl::doAttach(pid_t pid) {
  if (proc) return Error{errors::kAlreadyDebugging, "attach: a process is already being debugged", true};
  if (pid <= 0) return Error{errors::kBadProcessId, "attach: invalid process id " + std::to_string(pid), true};
  if (pid == getpid()) return Error{errors::kAttachToSelf, "attach: cannot debug the debugger itself", true};
  struct stat st;
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return attachError(pid, ESRCH);

  proc.emplace();
  siteChanged(0, -2);
  proc->pid = pid;
  proc->running = false;
  if (auto r = seizeAll(pid); !r) {
    proc.reset();
    return r;
  }
  currentPid = pid;
  if (auto r = stopAll(); !r) {
    (void)doDetach();
    return r;
  }
  if (!proc) return Error{errors::kNoSuchProcess, "attach to process " + std::to_string(pid) + ": it exited during attach", true};
  if (auto r = openMemory(); !r) {
    (void)doDetach();
    return r;
  }
  if (auto r = initRendezvousAttached(); !r) {
    (void)doDetach();
    return r;
  }
  if (!proc) return Error{errors::kNoSuchProcess, "attach to process " + std::to_string(pid) + ": it exited during attach", true};
  Thread* leader = findThread(pid);
  if (!leader) leader = &proc->threads.begin()->second;
  queueStop(*leader, stopOf(EngineStopReason::Attach));
  reportStop(*leader);
  return {};
}

}  // namespace strata::native::engine
