// The ranks of a distributed job in one session (ranks_backend.hpp): members, routing, how
// they come in and how the job ends (stops across members: ranks_execution.cpp).
#include "backends/ranks/ranks_backend.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/mixed/mixed_backend.hpp"
#include "backends/python/attach/pid_attach_backend.hpp"
#include "backends/python/attach/snapshot.hpp"
#include "backends/python/proxy/child_sessions.hpp"
#include "backends/python/proxy/peer_check.hpp"
#include "backends/python/proxy/python_backend.hpp"
#include "backends/ranks/proc_info.hpp"

namespace strata::backends {

namespace json = boost::json;
using asio::ip::tcp;

namespace {
// After the launcher exits, how long the members' links may take to close.
constexpr auto kMembersDrain = std::chrono::seconds(3);
const char* kTokenVariable = "STRATA_LAUNCH_TOKEN";

}  // namespace

// A member's (or the launcher's) host: what it reports comes back here with who it is.
class RanksBackend::Port final : public ForwardingHost {
 public:
  Port(RanksBackend& owner, std::optional<std::size_t> member) : ForwardingHost(owner.host_), owner_(owner), member_(member) {}
  // A member's backend the native debugger took over at a crash: nothing it says counts now.
  bool superseded = false;
  // The port of that native debugger (a mixed backend): its layers are parts the session routes to.
  bool forwardParts = false;

  void output(OutputCategory category, std::string text) override {
    if (superseded) return;
    // A member's link closing is how every rank ends: said once per member, by the backend.
    if (member_ && text == "The Python program closed the debug link.\n") return;
    owner_.host_.output(category, std::move(text));
  }
  void processStarted(const std::string& name, std::int64_t pid, bool launched) override {
    if (member_) return;  // the members are announced by their threads
    owner_.launcherPid_ = pid;
    owner_.host_.processStarted(name, pid, launched);
  }
  void exited(const ExitStatus& status) override {
    if (superseded) return;
    if (member_) return owner_.onMemberExited(m(), status);
    owner_.onLauncherExited(status);
  }
  bool canStartDebugging() const override { return false; }  // the ranks backend offers children itself
  // A crash of a launched rank on this machine: the ranks backend has the native debugger take
  // that member over (not the session, which would end the job's session); the others stop with
  // it. Ranks attached by pid do not arm the crash guard yet: with it, one run of the
  // processTree attach on CPython 3.14 (PEP 768) lost a rank's breakpoint stop under load, for
  // reasons not found.
  bool takesCrashes() const override {
    if (!member_ || superseded) return false;
    const Member& mm = *owner_.members_[*member_];
    return !mm.remote && mm.python != nullptr;
  }
  void crashed(const CrashReport& crash, std::function<void()> release) override {
    if (!takesCrashes()) return release();
    owner_.onMemberCrashed(m(), crash, std::move(release));
  }
  void stopped(const StopReport& stop) override {
    if (member_ && !superseded) owner_.onStopped(m(), stop);
  }
  void continued(std::int64_t threadId, bool allThreads) override {
    if (member_ && !superseded) owner_.onContinued(m(), threadId, allThreads);
  }
  void threadChanged(std::int64_t threadId, bool started) override {
    if (member_ && !superseded) owner_.onThread(m(), threadId, started);
  }
  void breakpointChanged(const BreakpointReport& state) override {
    if (member_ && !superseded) owner_.onBreakpoint(m(), state);
  }
  // A member that kept breakpoints until its agent was in (attach by pid) has placed them.
  void breakpointPlaced(Owner heldOwner, std::int64_t heldId, const BreakpointReport& placed) override {
    if (!member_ || superseded || heldOwner || !placed.id) return;
    owner_.book_.moved(m().backend.get(), heldId, *placed.id);
    owner_.onBreakpoint(m(), placed);
  }
  // A member's own parts are its business: the session sees the member (but a native debugger's
  // layers hand out the frames of its stops).
  void partAdded(Backend& part) override {
    if (forwardParts) owner_.host_.partAdded(part);
  }
  void partGone(Backend& part) override {
    if (forwardParts) owner_.host_.partGone(part);
  }
  void gpuActivity(const GpuActivityReport&) override {}

 private:
  Member& m() { return *owner_.members_[*member_]; }
  RanksBackend& owner_;
  std::optional<std::size_t> member_;
};

RanksBackend::RanksBackend(asio::io_context& io, BackendHost& host) : io_(io), host_(host), endTimer_(io) {}

RanksBackend::~RanksBackend() {
  *alive_ = false;
  if (listener_) listener_->close();
}

BackendFeatures RanksBackend::features() const {
  BackendFeatures f = PythonBackend::staticFeatures();
  f.processesRunApart = !stopAll_;
  return f;
}

RanksBackend::Member& RanksBackend::newMember(std::int64_t pid) {
  auto m = std::make_unique<Member>();
  m->index = members_.size();
  m->pid = pid;
  m->rank = procinfo::environRank(pid);
  m->port = std::make_unique<Port>(*this, m->index);
  members_.push_back(std::move(m));
  return *members_.back();
}

std::int64_t RanksBackend::sessionTid(const Member& m, std::int64_t tid) {
  if (!m.remote || tid == 0) return tid;
  auto [it, fresh] = remoteTids_.try_emplace({m.index, tid}, nextRemoteTid_);
  if (fresh) remoteThreads_[nextRemoteTid_++] = {m.index, tid};
  return it->second;
}

BackendHost& RanksBackend::hostOf(Member& m) { return *m.port; }

void RanksBackend::setBackend(Member& m, std::unique_ptr<Backend> backend) {
  m.backend = std::move(backend);
  host_.partAdded(*m.backend);
}

void RanksBackend::memberGone(Member& m) {
  if (m.gone) return;
  m.gone = true;
  if (m.backend) {
    book_.forget(m.backend.get());
    host_.partGone(*m.backend);
  }
}

RanksBackend::Member* RanksBackend::memberOf(std::int64_t threadId, std::int64_t* local) {
  if (local) *local = threadId;
  if (threadId >= kRemoteThreads) {
    auto it = remoteThreads_.find(threadId);
    if (it == remoteThreads_.end()) return nullptr;
    if (local) *local = it->second.second;
    return members_[it->second.first].get();
  }
  auto it = threadOwner_.find(threadId);
  if (it != threadOwner_.end()) return members_[it->second].get();
  return nullptr;
}

RanksBackend::Member* RanksBackend::memberByPid(std::int64_t pid) {
  for (auto& m : members_)
    if (m->pid == pid) return m.get();
  return nullptr;
}

std::string RanksBackend::label(const Member& m) const {
  if (m.rank) return "rank " + std::to_string(*m.rank);
  if (m.root) return "launcher " + std::to_string(m.pid);
  return "pid " + std::to_string(m.pid) + (m.remote ? " on " + m.host : "");
}

bool RanksBackend::rankWanted(const Member& m) const {
  if (rankFilter_.empty() || !m.rank) return true;
  return std::find(rankFilter_.begin(), rankFilter_.end(), *m.rank) != rankFilter_.end();
}

std::int64_t RanksBackend::anyThread(const Member& m) const {
  return m.threads.empty() ? m.pid : *m.threads.begin();
}

// ---- launch: the launcher runs; every Python process under it dials in ----------------------

void RanksBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  std::string agentDir = agentPythonPath(host_.adapterExecutable());
  if (agentDir.empty())
    return reply(Error{errors::kAgentUnavailable,
                       "the Strata Python agent was not found beside strata-dap; set STRATA_AGENT_PYTHONPATH to its folder",
                       true});
  rankFilter_ = spec.rankFilter;
  stopAll_ = spec.stopAll;
  coreOnCrash_ = spec.coreOnCrash;
  justMyCode_ = spec.justMyCode;
  token_ = makeLaunchToken();
  std::weak_ptr<bool> alive = alive_;
  if (!spec.ranksAddress.empty()) ranksHost_ = spec.ranksAddress;
  if (ranksHost_.size() > 2 && ranksHost_.front() == '[' && ranksHost_.back() == ']')
    ranksHost_ = ranksHost_.substr(1, ranksHost_.size() - 2);
  auto listener = protocol::Listener::open(io_, protocol::HostPort{ranksHost_, 0}, [this, alive](tcp::socket s) {
    if (!alive.expired()) onAccept(std::move(s));
  });
  if (!listener) {
    Error e = listener.takeError();
    e.message = "cannot listen for the ranks on " + ranksHost_ + ": " + e.message;
    return reply(std::move(e));
  }
  listener_ = std::move(*listener);
  // What the ranks dial: the address given, or this machine's name when it is "any".
  std::string advertised = ranksHost_;
  if (advertised == "0.0.0.0" || advertised == "::") {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    advertised = name;
  }

  LaunchSpec child = spec;
  child.ranks = false;
  std::string pythonPath = agentDir + "/strata/_rankboot:" + agentDir;
  for (auto it = child.environment.begin(); it != child.environment.end();) {
    bool ours = it->rfind("PYTHONPATH=", 0) == 0 || it->rfind("STRATA_RANKS=", 0) == 0 ||
                it->rfind(std::string(kTokenVariable) + "=", 0) == 0;
    if (it->rfind("PYTHONPATH=", 0) == 0 && it->size() > 11) pythonPath += ":" + it->substr(11);
    it = ours ? child.environment.erase(it) : it + 1;
  }
  child.environment.push_back("PYTHONPATH=" + pythonPath);
  // An IPv6 address goes in brackets ([::1]:PORT), as in a URL.
  if (advertised.find(':') != std::string::npos && advertised.front() != '[') advertised = "[" + advertised + "]";
  child.environment.push_back("STRATA_RANKS=" + advertised + ":" + std::to_string(listener_->endpoint().port()));
  child.environment.push_back(std::string(kTokenVariable) + "=" + token_);
  launcherPort_ = std::make_unique<Port>(*this, std::nullopt);
  launcher_ = std::make_unique<ProcessBackend>(io_, *launcherPort_);
  launcher_->launch(child, std::move(reply));
}

void RanksBackend::onAccept(tcp::socket socket) {
  if (ending_) return;
  // Only the processes of this launch: each sends the launch's token first (it is in their
  // environment), before a single request is read.
  std::weak_ptr<bool> alive = alive_;
  expectTokenLine(std::move(socket), token_, [this, alive](tcp::socket s) {
    if (!alive.expired() && !ending_) acceptMember(std::move(s));
  });
}

void RanksBackend::acceptMember(tcp::socket socket) {
  auto pid = loopbackPeerPid(socket);
  // From another machine: a member, named once its agent says who it is.
  if (!pid) return adoptMember(std::move(socket), 0);
  if (multiprocessingHelper(*pid)) return;  // the socket closes: the helper runs on undebugged
  if (memberByPid(*pid)) return;
  Member* parent = memberByPid(parentProcess(*pid));
  if (parent && !parent->root) {
    // Named after its rank, which a spawned rank may have set only after it started.
    auto held = std::make_shared<tcp::socket>(std::move(socket));
    std::weak_ptr<bool> alive = alive_;
    std::size_t index = parent->index;
    std::int64_t child = *pid;
    return learnRank(*parent, [this, alive, held, child, index] {
      if (!alive.expired()) handOver(std::move(*held), child, label(*members_[index]));
    });
  }
  adoptMember(std::move(socket), *pid);
}

// A process of the launch that dialed in becomes a member (pid 0: on another machine).
void RanksBackend::adoptMember(tcp::socket socket, std::int64_t pid) {
  Member& m = newMember(pid);
  m.remote = pid == 0;
  m.root = pid != 0 && pid == launcherPid_;
  auto py = std::make_unique<PythonBackend>(io_, *m.port);
  m.python = py.get();
  setBackend(m, std::move(py));
  AttachSpec spec;
  spec.justMyCode = justMyCode_;
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = m.index;
  m.python->adopt(std::move(socket), spec, [this, alive, index](Result<void> r) {
    if (alive.expired()) return;
    Member& mm = *members_[index];
    if (!r) {
      if (!mm.remote)
        host_.output(OutputCategory::Important, "Process " + std::to_string(mm.pid) +
                                                    " of the job could not be debugged: " + r.error().message + "\n");
      memberGone(mm);
      return maybeEnd();
    }
    if (!mm.remote) {
      mm.ready = mm.live = true;
      return memberReady(mm);
    }
    mm.python->processFacts([this, alive, index](Result<ProcessFacts> info) {
      if (alive.expired()) return;
      Member& m2 = *members_[index];
      if (info) {
        if (info->pid) m2.pid = *info->pid;
        if (!info->host.empty()) m2.host = info->host;
      }
      m2.ready = m2.live = true;
      memberReady(m2);
    });
  });
}

// A process that is not a rank (a DataLoader worker, a subprocess of a rank): its own session.
void RanksBackend::handOver(tcp::socket socket, std::int64_t pid, std::string parent) {
  offerChildSession(host_, alive_, std::move(socket), pid,
                    "process " + std::to_string(pid) + " (a child of " + parent + ")", justMyCode_);
}

void RanksBackend::memberReady(Member& m) {
  std::size_t index = m.index;
  std::weak_ptr<bool> alive = alive_;
  learnRank(m, [this, alive, index] {
    if (alive.expired()) return;
    Member& mm = *members_[index];
    if (mm.gone) return;
    mm.breakpointsOn = rankWanted(mm);
    applyAll(mm, [this, alive, index] {
      if (alive.expired()) return;
      Member& m3 = *members_[index];
      if (configured_) configureMember(m3);
      announceThreads(m3);
    });
  });
}

void RanksBackend::learnRank(Member& m, std::function<void()> then) {
  if (m.viaAdapter) return then();  // a node's strata-dap names its ranks itself
  AgentProcess* agent = m.python ? static_cast<AgentProcess*>(m.python) : (m.attached && m.live ? m.attached : nullptr);
  if (!agent) return then();
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = m.index;
  agent->processFacts([this, alive, index, then](Result<ProcessFacts> r) {
    if (alive.expired()) return;
    if (r && r->rank) members_[index]->rank = *r->rank;
    then();
  });
}

void RanksBackend::configureMember(Member& m) {
  if (m.configured || m.gone) return;
  m.configured = true;
  m.backend->configurationDone([](Result<void>) {});
}

void RanksBackend::announceThreads(Member& m) {
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = m.index;
  m.backend->threads([this, alive, index](Result<std::vector<ThreadInfo>> r) {
    if (alive.expired() || !r) return;
    Member& mm = *members_[index];
    for (const auto& t : *r) {
      if (!mm.remote) threadOwner_[t.id] = index;
      if (mm.threads.insert(t.id).second) host_.threadChanged(sessionTid(mm, t.id), true);
    }
  });
}

void RanksBackend::configurationDone(Reply<void> reply) {
  configured_ = true;
  for (auto& m : members_)
    if (m->ready) configureMember(*m);
  reply({});
}

void RanksBackend::abandonStart() {
  ending_ = true;
  if (listener_) listener_->close();
  if (launcher_) launcher_->abandonStart();
  for (auto& m : members_)
    if (m->backend) m->backend->abandonStart();
}

// ---- the end -------------------------------------------------------------------------------------

void RanksBackend::onMemberExited(Member& m, const ExitStatus& status) {
  if (m.gone) return;
  memberGone(m);
  lastExit_ = status;
  for (auto t : m.threads) {
    if (!m.remote) threadOwner_.erase(t);
    host_.threadChanged(sessionTid(m, t), false);
  }
  m.threads.clear();
  maybeEnd();
}

void RanksBackend::onLauncherExited(const ExitStatus& status) {
  launcherExit_ = status;
  if (listener_) listener_->close();
  std::weak_ptr<bool> alive = alive_;
  endTimer_.expires_after(kMembersDrain);
  endTimer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired() || ended_) return;
    ended_ = true;
    host_.exited(*launcherExit_);
  });
  maybeEnd();
}

void RanksBackend::maybeEnd() {
  if (ended_) return;
  bool anyLeft = std::any_of(members_.begin(), members_.end(), [](const auto& m) { return !m->gone; });
  if (anyLeft) return;
  if (launcher_ && !launcherExit_) return;  // the launcher may start more
  if (!launcher_ && members_.empty()) return;
  ended_ = true;
  endTimer_.cancel();
  host_.exited(launcherExit_ ? *launcherExit_ : lastExit_);
}

void RanksBackend::terminate(bool force, Reply<void> reply) {
  ending_ = true;
  auto left = std::make_shared<std::size_t>(1);
  auto finish = [left, reply] {
    if (--*left == 0) reply({});
  };
  for (auto& m : members_) {
    if (m->gone || !m->live) continue;
    ++*left;
    m->backend->terminate(force, [finish](Result<void>) { finish(); });
  }
  if (launcher_ && !launcherExit_) {
    ++*left;
    launcher_->terminate(force, [finish](Result<void>) { finish(); });
  }
  finish();
}

void RanksBackend::detach(Reply<void> reply) {
  ending_ = true;
  if (listener_) listener_->close();
  auto left = std::make_shared<std::size_t>(1);
  auto finish = [left, reply] {
    if (--*left == 0) reply({});
  };
  for (auto& m : members_) {
    if (m->gone) continue;
    ++*left;
    m->backend->detach([finish](Result<void>) { finish(); });
  }
  if (launcher_) {
    ++*left;
    launcher_->detach([finish](Result<void>) { finish(); });
  }
  finish();
}

// A rank that crashes: its agent's crash guard holds the faulting thread and calls in; the
// native debugger takes that member over (mixed mode's attach after a crash, as the session
// does for one program) and stops at the fault with its merged stack, while the job's other
// members are paused with it (stopAll). `continue` lets the rank die of its signal.
void RanksBackend::onMemberCrashed(Member& m, const CrashReport& crash, std::function<void()> release) {
  if (m.gone || m.supersededBackend || !m.backend) return release();
  host_.output(OutputCategory::Console, label(m) + ": thread " + std::to_string(crash.threadId) + " crashed (" +
                                            signalName(crash.signal) + "): the native debugger takes this rank over to stop there.\n");
  // The agent's backend says nothing more (its ids are gone); the native debugger's reports come
  // as this member's through a port of their own.
  m.port->superseded = true;
  host_.partGone(*m.backend);
  book_.forget(m.backend.get());
  m.supersededPort = std::move(m.port);
  m.supersededBackend = std::move(m.backend);
  m.python = nullptr;
  m.attached = nullptr;
  m.port = std::make_unique<Port>(*this, m.index);
  m.port->forwardParts = true;
  auto mixed = std::make_unique<MixedBackend>(io_, *m.port);
  CrashReport report = crash;
  report.coreOnCrash = coreOnCrash_;
  mixed->attachAfterCrash(report, std::move(release));
  setBackend(m, std::move(mixed));
}

}  // namespace strata::backends
