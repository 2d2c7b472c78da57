// Attach by pid to a running CPython: the read-only session on its memory, the agent brought in
// through the pending-call queue, and the hand-over to PythonBackend once the agent dials back
// (the requests, answered by either: pid_attach_requests.cpp).
#include "backends/python/attach/pid_attach_backend.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "backends/python/attach/injector.hpp"
#include "backends/python/proxy/peer_check.hpp"
#include "strata/hex.hpp"

namespace strata::backends {

namespace fs = std::filesystem;
namespace pa = strata::python::attach;
namespace pr = strata::python::remote;

namespace {
constexpr auto kAgentPatience = std::chrono::seconds(3);  // before saying why the agent is not in

std::string threadName(std::int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// A Python string literal of `text` (single-quoted, escaped).
std::string pyLiteral(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// Where the agent package is, seen from inside the target: the same path when the target sees
// the same file there; else a copy made under its root (/proc/PID/root: its mount namespace,
// a container's file system).
Result<std::string> agentDirFor(std::int64_t pid, const std::string& agentDir, const std::string& token) {
  struct stat ours {}, theirs {};
  std::string root = "/proc/" + std::to_string(pid) + "/root";
  std::string marker = agentDir + "/strata/__init__.py";
  if (stat(marker.c_str(), &ours) == 0 && stat((root + marker).c_str(), &theirs) == 0 && ours.st_dev == theirs.st_dev &&
      ours.st_ino == theirs.st_ino)
    return agentDir;
  std::string inside = "/tmp/strata-agent-" + token;
  std::error_code ec;
  fs::create_directories(root + inside, ec);
  if (!ec) fs::copy(agentDir, root + inside, fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
  if (ec) return Error{errors::kAgentUnavailable, "cannot copy the agent into the process's file system (" + root + inside + "): " + ec.message(), true};
  return inside;
}

// 3.14+: the bootstrap as a file the process can open (PEP 768 names a path), under its root
// (/proc/PID/root: its mount namespace), readable by it alone: it holds the token.
Result<std::string> writeBootstrapScript(std::int64_t pid, const std::string& token, const std::string& code) {
  std::string root = "/proc/" + std::to_string(pid) + "/root";
  std::string inside = "/tmp/strata-attach-" + token + ".py";
  int fd = ::open((root + inside).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errnoError(errors::kAgentUnavailable, "cannot write the agent's bootstrap to " + root + inside);
  struct stat owner {};
  // Attaching as root to another user's process: the file becomes theirs.
  if (stat(("/proc/" + std::to_string(pid)).c_str(), &owner) == 0 && owner.st_uid != ::geteuid())
    (void)::fchown(fd, owner.st_uid, owner.st_gid);
  bool ok = ::write(fd, code.data(), code.size()) == static_cast<ssize_t>(code.size());
  ::close(fd);
  if (!ok) {
    ::unlink((root + inside).c_str());
    return Error{errors::kAgentUnavailable, "cannot write the agent's bootstrap to " + root + inside, true};
  }
  return inside;
}

// Whether the agent folder holds a C core built for CPython 3.`minor`
// (strata/_strata_core.cpython-3MINOR-*.so).
bool hasCore(const std::string& agentDir, int minor) {
  std::error_code ec;
  std::string prefix = "_strata_core.cpython-3" + std::to_string(minor) + "-";
  for (const auto& e : fs::directory_iterator(agentDir + "/strata", ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

// Where this process reaches a path the target sees: the path itself when both share a root
// directory (so the file can still be removed after the target ended), else through its root.
std::string reachable(std::int64_t pid, const std::string& inside) {
  std::string root = "/proc/" + std::to_string(pid) + "/root";
  struct stat ours {}, theirs {};
  if (stat("/", &ours) == 0 && stat(root.c_str(), &theirs) == 0 && ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino)
    return inside;
  return root + inside;
}
}  // namespace

PidAttachBackend::PidAttachBackend(asio::io_context& io, BackendHost& host)
    : ForwardingHost(host), io_(io), host_(host), waitTimer_(io), exitTimer_(io) {}

PidAttachBackend::~PidAttachBackend() {
  *alive_ = false;
  removeScript();
}

bool PidAttachBackend::wants(std::int64_t pid) { return pid > 0 && pa::runsPython(static_cast<pid_t>(pid)); }

void PidAttachBackend::launch(const LaunchSpec&, Reply<void> reply) {
  reply(Error{errors::kUnsupportedRequest, "this backend only attaches", false});
}

Result<void> PidAttachBackend::refresh() {
  auto s = pa::takeSnapshot(*remote_);
  if (!s) return s.takeError();
  snap_ = std::move(*s);
  return {};
}

void PidAttachBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  spec_ = spec;
  pid_ = *spec.processId;
  auto remote = pr::PyRemote::open(static_cast<pid_t>(pid_));
  if (!remote) return reply(remote.takeError());
  remote_ = std::move(*remote);
  if (auto r = refresh(); !r) {
    // The engine's refusal (tracer, Yama, ids, dumpability) names the operation, which the
    // attach handler's "cannot attach: " already says (as for a native attach).
    Error e = r.takeError();
    if (e.message.rfind("attach to ", 0) == 0) e.message.erase(0, 10);
    return reply(std::move(e));
  }
  host_.processStarted(threadName(pid_), pid_, false);
  host_.output(OutputCategory::Console, "Attached to process " + std::to_string(pid_) + " (CPython " + snap_.version + ", " +
                                            std::to_string(snap_.threads.size()) + " threads): its state read from memory.\n");
  reply({});
  watchExit();
  if (snap_.stoppedBySignal) {
    readOnly_ = "process " + std::to_string(pid_) + " is stopped by a signal (SIGSTOP) and is left stopped; continue "
                "it (the continue request) to resume it and let the debugger in";
  }
  if (!readOnly_.empty()) host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
}

void PidAttachBackend::startAgent() {
  std::string agentDir = agentPythonPath(host_.adapterExecutable());
  if (agentDir.empty()) {
    readOnly_ = "the Strata Python agent was not found (set STRATA_AGENT_PYTHONPATH to its folder)";
    return;
  }
  // 3.10/3.11: the agent traces from its C core, which must have been built for this CPython.
  if (snap_.minor < 12 && !hasCore(agentDir, snap_.minor)) {
    readOnly_ = "the Strata agent's C core (_strata_core) was not built for CPython 3." + std::to_string(snap_.minor) +
                ", and on 3.10/3.11 the agent needs it (it traces from C)";
    return;
  }
  token_ = makeLaunchToken();
  auto dir = agentDirFor(pid_, agentDir, token_);
  if (!dir) {
    readOnly_ = dir.error().message;
    return;
  }
  agent_ = std::make_unique<PythonBackend>(io_, static_cast<BackendHost&>(*this));
  AttachSpec listen;
  listen.listen = true;
  listen.host = "127.0.0.1";
  listen.port = 0;
  listen.token = token_;
  listen.timeoutSeconds = 86400;
  listen.justMyCode = spec_.justMyCode;
  listen.subProcess = spec_.subProcess;
  std::weak_ptr<bool> alive = alive_;
  agent_->attach(listen, [this, alive](Result<void> r) {
    if (alive.expired() || ended_) return;
    if (r) return onAgentIn();
    readOnly_ = "the agent did not start: " + r.error().message;
    host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
  });
  std::uint16_t port = agent_->listeningPort();
  if (!port) {
    readOnly_ = "cannot listen for the agent on 127.0.0.1";
    return;
  }
  // Run by PyRun_SimpleString in __main__: names stay in a dict of its own, nothing it raises
  // reaches the program, and a second run (both queues) does nothing.
  std::string body = "import sys\n"
                     "d=sys.__dict__.setdefault('_strata_attach',set())\n"
                     "if " + pyLiteral(token_) + " not in d:\n"
                     " d.add(" + pyLiteral(token_) + ")\n"
                     " sys.path.insert(0," + pyLiteral(*dir) + ")\n"
                     " try:\n"
                     "  import strata\n"
                     "  strata.connect(('127.0.0.1'," + std::to_string(port) + "),token=" + pyLiteral(token_) + ")\n"
                     " finally:\n"
                     "  sys.path.remove(" + pyLiteral(*dir) + ")\n";
  std::string code = "try:exec(" + pyLiteral(body) + ",{})\nexcept BaseException:pass\n";
  // 3.14+: PEP 768's remote-debugging request names a file; 3.10 to 3.13: a pending call runs
  // the string (3.10/3.11: on the main thread, the only one that runs pending calls there).
  remoteExec_ = snap_.minor >= 14;
  std::string scriptInside;
  if (remoteExec_) {
    auto script = writeBootstrapScript(pid_, token_, code);
    if (!script) {
      readOnly_ = script.error().message;
      return;
    }
    scriptInside = *script;
    scriptFile_ = reachable(pid_, scriptInside);
  }
  Result<pa::QueuedBootstrap> queued = pa::QueuedBootstrap{true, {}, false};
  for (int attempt = 0; attempt < 50; ++attempt) {
    queued = remoteExec_ ? pa::requestRemoteExec(*remote_, snap_.threadStates, scriptInside)
                         : pa::queueBootstrap(*remote_, snap_.threadStates, code);
    if (!queued || !queued->busy) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (queued && !queued->busy && !queued->disabled) bootstrap_ = *queued;
  if (!queued || queued->busy || queued->disabled) {
    readOnly_ = !queued              ? "the agent could not be queued: " + queued.error().message
                : queued->disabled   ? "remote debugging is disabled in process " + std::to_string(pid_) +
                                         " (it was started with -X disable-remote-debug or PYTHON_DISABLE_REMOTE_DEBUG "
                                         "set, or its CPython was built --without-remote-debug); start it without that "
                                         "to let the debugger in"
                : remoteExec_        ? "another debugger's remote-debugging request (sys.remote_exec) stayed pending for 0.5 s"
                                     : "the interpreter's pending-call queue stayed locked or full for 0.5 s";
    removeScript();
    host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
    return;
  }
  waitTimer_.expires_after(kAgentPatience);
  waitTimer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired() || agentIn_ || ended_) return;
    explainWaiting();
  });
}

// The agent is not in after a while: say which thread keeps it out, from a fresh picture (kept
// apart from the one the client may be looking at, whose frame ids stay valid).
void PidAttachBackend::explainWaiting() {
  auto fresh = pa::takeSnapshot(*remote_);
  if (!fresh) return;
  std::string why;
  for (const auto& t : fresh->threads)
    if (t.tid == fresh->gilHolder && fresh->gilLocked)
      why = "thread " + std::to_string(t.tid) + " (" + t.name + ") holds the GIL and has not released it" +
            (t.topNative.empty() ? "" : " (it is in " + t.topNative + ")") +
            "; the debugger gets in when it does (a Python line runs)";
  // 3.10/3.11 run pending calls on the main thread alone: other threads running Python code
  // do not bring the agent in.
  if (why.empty() && fresh->minor < 12) {
    const pa::SnapshotThread* main = nullptr;
    for (const auto& t : fresh->threads)
      if (t.tid == pid_) main = &t;
    std::string what = !main                       ? "has ended"
                       : !main->python               ? "has no Python thread state"
                       : main->state == "running"    ? "is running C code"
                                                     : "is " + main->state;
    if (main && main->python && !main->topNative.empty()) what += " (in " + main->topNative + ")";
    why = "the main thread " + std::to_string(pid_) + (main ? " (" + main->name + ")" : std::string()) + " " + what +
          " and has not run Python code since the attach; on CPython " + fresh->version +
          " only the main thread can bring the debugger in: it gets in when that thread runs Python code again";
  }
  if (why.empty()) {
    std::string waits;
    for (const auto& t : fresh->threads)
      if (t.python && waits.size() < 400)
        waits += (waits.empty() ? "" : ", ") + std::string("thread ") + std::to_string(t.tid) + " (" + t.name + ") " + t.state;
    why = "no thread has run Python code since the attach (" + (waits.empty() ? std::string("no Python thread") : waits) +
          "); the debugger gets in when one does";
  }
  readOnly_ = why;
  host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
}

void PidAttachBackend::removeScript() {
  if (!scriptFile_.empty()) ::unlink(scriptFile_.c_str());
  scriptFile_.clear();
}

void PidAttachBackend::onAgentIn() {
  agentIn_ = true;
  readOnly_.clear();
  waitTimer_.cancel();
  // 3.14+: the threads that have not run the bootstrap yet are asked no more; then its file
  // can go (a thread that still found it pending would say it cannot open it).
  if (remoteExec_ && bootstrap_) {
    if (pa::cancelRemoteExec(*remote_, *bootstrap_)) removeScript();
    bootstrap_.reset();
  }
  // The breakpoints kept meanwhile, placed: the client keeps the ids it has for them.
  std::weak_ptr<bool> alive = alive_;
  kept_.replay(*agent_, [this, alive](const BreakpointBook::SetPtr& set, Result<std::vector<BreakpointReport>> r) {
    if (alive.expired() || !r || set->kind == BreakpointSet::Kind::Exception) return;  // filters: no ids
    for (std::size_t i = 0; i < r->size() && i < set->ids.size(); ++i) host_.breakpointPlaced(nullptr, set->ids[i], (*r)[i]);
  });
  kept_.clear();
  if (configured_) agent_->configurationDone([](Result<void>) {});
  if (snapshotShown_) host_.continued(0, true);
  snapshotShown_ = false;
  host_.output(OutputCategory::Important, "The Strata agent is in process " + std::to_string(pid_) +
                                              ": breakpoints, stepping and evaluate work now.\n");
  if (agentInHook_) std::exchange(agentInHook_, nullptr)();
}

void PidAttachBackend::output(OutputCategory category, std::string text) {
  // The listening PythonBackend's invitation is for programs started by hand, not this one.
  if (category == OutputCategory::Console && text.rfind("Waiting for a Python program", 0) == 0) return;
  host_.output(category, std::move(text));
}

void PidAttachBackend::exited(const ExitStatus& status) {
  if (ended_) return;
  ended_ = true;
  host_.exited(status);
}

// The program is not ours to wait for: its end is noticed by looking.
void PidAttachBackend::watchExit() {
  std::weak_ptr<bool> alive = alive_;
  exitTimer_.expires_after(std::chrono::milliseconds(200));
  exitTimer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired() || ended_) return;
    if (::kill(static_cast<pid_t>(pid_), 0) != 0 && errno == ESRCH) {
      if (agentIn_) return;  // the agent reports the exit itself
      ended_ = true;
      // Not our child: its status is unknown, except the signal terminate sent.
      ExitStatus status;
      if (terminatedBy_) status.signal = terminatedBy_;
      return host_.exited(status);
    }
    watchExit();
  });
}

std::string PidAttachBackend::readOnlyText() const {
  return "the session is read-only until the Strata agent is in (" +
         (readOnly_.empty() ? std::string("it is on its way") : readOnly_) + ")";
}

}  // namespace strata::backends
