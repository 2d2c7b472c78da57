// The ranks of a distributed job in one session (ranks_backend.hpp): members, routing, the
// breakpoints every member shares, stops across members, child sessions.
#include "backends/ranks/ranks_backend.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/python/attach/pid_attach_backend.hpp"
#include "backends/python/attach/snapshot.hpp"
#include "backends/python/proxy/agent_link.hpp"
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
class RanksBackend::Port final : public BackendHost {
 public:
  Port(RanksBackend& owner, std::optional<std::size_t> member) : owner_(owner), member_(member) {}

  void output(OutputCategory category, std::string text) override {
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
    if (member_) return owner_.onMemberExited(m(), status);
    owner_.onLauncherExited(status);
  }
  bool congested() const override { return owner_.host_.congested(); }
  void whenWritable(std::function<void()> resume) override { owner_.host_.whenWritable(std::move(resume)); }
  bool canRunInTerminal() const override { return owner_.host_.canRunInTerminal(); }
  void runInTerminal(const TerminalLaunch& launch, Reply<TerminalProcess> reply) override {
    owner_.host_.runInTerminal(launch, std::move(reply));
  }
  const std::string& adapterExecutable() const override { return owner_.host_.adapterExecutable(); }
  void stopped(const StopReport& stop) override {
    if (member_) owner_.onStopped(m(), stop);
  }
  void continued(std::int64_t threadId, bool allThreads) override {
    if (member_) owner_.onContinued(m(), threadId, allThreads);
  }
  void threadChanged(std::int64_t threadId, bool started) override {
    if (member_) owner_.onThread(m(), threadId, started);
  }
  void breakpointChanged(const BreakpointReport& state) override {
    if (member_) owner_.onBreakpoint(m(), state);
  }
  void moduleChanged(const ModuleInfo& module, const std::string& reason) override {
    owner_.host_.moduleChanged(module, reason);
  }
  void progress(const ProgressReport& report) override { owner_.host_.progress(report); }

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

Result<std::pair<RanksBackend::Member*, std::int64_t>> RanksBackend::untag(std::int64_t id, const char* what) {
  if (id <= 0) return Error{errors::kBadArguments, std::string("unknown ") + what + " " + std::to_string(id), false};
  auto index = static_cast<std::size_t>(id % kSlots);
  if (index >= members_.size() || members_[index]->gone)
    return Error{errors::kBadArguments,
                 std::string(what) + " " + std::to_string(id) + " belongs to no running process of this job", false};
  return std::make_pair(members_[index].get(), id / kSlots);
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
  std::string cmdline = procinfo::commandLine(*pid);
  if (procinfo::multiprocessingHelper(cmdline)) return;  // the socket closes: the helper runs on undebugged
  if (memberByPid(*pid)) return;
  Member* parent = memberByPid(procinfo::parentOf(*pid));
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
  m.backend = std::move(py);
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
      mm.gone = true;
      return maybeEnd();
    }
    if (!mm.remote) {
      mm.ready = mm.live = true;
      return memberReady(mm);
    }
    mm.python->agentRequest("strataProcess", json::object{}, [this, alive, index](Result<json::value> info) {
      if (alive.expired()) return;
      Member& m2 = *members_[index];
      if (info && info->is_object()) {
        const auto& o = info->get_object();
        if (auto* p = o.if_contains("pid"); p && p->is_int64()) m2.pid = p->as_int64();
        if (auto* h = o.if_contains("host"); h && h->is_string()) m2.host = std::string(h->get_string());
      }
      m2.ready = m2.live = true;
      memberReady(m2);
    });
  });
}

// A process that is not a rank (a DataLoader worker, a subprocess of a rank): its own session.
void RanksBackend::handOver(tcp::socket socket, std::int64_t pid, std::string parent) {
  std::string what = "process " + std::to_string(pid) + " (a child of " + parent + ")";
  if (!host_.canStartDebugging()) {
    host_.output(OutputCategory::Console, what + " runs without the debugger: this client opens no child sessions "
                                                 "(startDebugging)\n");
    return;  // the socket closes: the agent lets the process run on
  }
  std::string childToken = makeLaunchToken();
  std::weak_ptr<bool> alive = alive_;
  auto link = AgentLink::open(std::move(socket), AgentLink::Callbacks{[](const std::string&, const json::value&) {},
                                                                      [] {}});
  link->request("strataHandover", json::object{{"token", childToken}},
                [this, alive, link, pid, what, childToken](Result<json::value> r) {
                  link->close();
                  if (alive.expired()) return;
                  const json::value* port = r && r->is_object() ? r->get_object().if_contains("port") : nullptr;
                  if (!port || !port->is_int64()) {
                    host_.output(OutputCategory::Console,
                                 what + " runs without the debugger: " + (r ? "no port in its answer" : r.error().message) + "\n");
                    return;
                  }
                  json::object config{{"type", "strata"},
                                      {"request", "attach"},
                                      {"name", what},
                                      {"connect", json::object{{"host", "127.0.0.1"}, {"port", port->as_int64()}}},
                                      {"token", childToken},
                                      {"justMyCode", justMyCode_},
                                      {"subProcessId", pid}};
                  host_.startDebugging("attach", json::serialize(config), [this, alive, what](Result<void> done) {
                    if (alive.expired() || done) return;
                    host_.output(OutputCategory::Console, what + ": no child session: " + done.error().message + "\n");
                  });
                });
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
  PythonBackend* agent = m.python ? m.python : (m.attached && m.live ? m.attached->agent() : nullptr);
  if (!agent) return then();
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = m.index;
  agent->agentRequest("strataProcess", json::object{}, [this, alive, index, then](Result<json::value> r) {
    if (alive.expired()) return;
    if (r && r->is_object())
      if (auto* rank = r->get_object().if_contains("rank"); rank && rank->is_int64())
        members_[index]->rank = rank->as_int64();
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

// ---- execution across members -----------------------------------------------------------------

void RanksBackend::pauseOthers(const Member& except) {
  for (auto& m : members_) {
    if (m.get() == &except || m->gone || !m->live || !m->configured || m->stopped || m->pausing) continue;
    m->pausing = true;
    m->backend->pause(anyThread(*m), [](Result<void>) {});
  }
}

void RanksBackend::onStopped(Member& m, StopReport stop) {
  if (m.gone) return;
  bool induced = m.pausing && stop.reason == "pause";
  m.pausing = false;
  m.stopped = true;
  if (stop.threadId) {
    if (!m.remote) threadOwner_[*stop.threadId] = m.index;
    m.threads.insert(*stop.threadId);
  }
  for (auto& id : stop.hitBreakpointIds)
    if (auto it = m.bpFromChild.find(id); it != m.bpFromChild.end()) id = it->second;
  if (induced) return;  // the stop of another member, already reported as stopping every one
  // A rank whose rank was not known when it came (a spawned rank sets RANK itself): learn it
  // now; rankFilter may leave it out, and then it runs on with its breakpoints removed.
  if (!m.rank && (stop.reason == "breakpoint" || stop.reason == "function breakpoint")) {
    std::size_t index = m.index;
    std::weak_ptr<bool> alive = alive_;
    return learnRank(m, [this, alive, index, stop] {
      if (alive.expired()) return;
      Member& mm = *members_[index];
      if (mm.gone) return;
      if (mm.rank && !rankWanted(mm)) {
        mm.breakpointsOn = false;
        mm.stopped = false;
        std::weak_ptr<bool> alive2 = alive_;
        return applyAll(mm, [this, alive2, index] {
          if (alive2.expired()) return;
          Member& m3 = *members_[index];
          m3.backend->resume(anyThread(m3), false, [](Result<bool>) {});
        });
      }
      reportStop(mm, stop);
    });
  }
  reportStop(m, std::move(stop));
}

void RanksBackend::reportStop(Member& m, StopReport stop) {
  lastStopped_ = m.index;
  m.lastStopReason = stop.reason;
  if (stopAll_) {
    stop.allThreadsStopped = true;
    pauseOthers(m);
  } else {
    stop.allThreadsStopped = false;
    for (auto t : m.threads)
      if (!stop.threadId || t != *stop.threadId) stop.alsoStopped.push_back(sessionTid(m, t));
  }
  if (stop.threadId) stop.threadId = sessionTid(m, *stop.threadId);
  if (!m.viaAdapter && (!stop.description.empty() || stop.reason != "pause"))
    stop.description = label(m) + ": " + (stop.description.empty() ? stop.reason : stop.description);
  host_.stopped(stop);
}

void RanksBackend::onContinued(Member& m, std::int64_t threadId, bool allThreads) {
  if (m.gone) return;
  if (allThreads) m.stopped = false;
  if (threadId && !m.remote) threadOwner_[threadId] = m.index;
  // All of a member's threads went (an attached member's snapshot ends when its agent is in):
  // they run on, each said so, and the other members' threads stay as they are, unless every
  // member runs now.
  if (allThreads) {
    bool othersStopped = !stopAll_ || std::any_of(members_.begin(), members_.end(), [&](const auto& o) {
      return o.get() != &m && !o->gone && o->stopped;
    });
    if (othersStopped) {
      if (threadId && !m.threads.count(threadId)) host_.continued(sessionTid(m, threadId), false);
      for (auto t : m.threads) host_.continued(sessionTid(m, t), false);
      return;
    }
  }
  host_.continued(sessionTid(m, threadId), allThreads);
}

void RanksBackend::onThread(Member& m, std::int64_t threadId, bool started) {
  if (started) {
    if (!m.remote) threadOwner_[threadId] = m.index;
    m.threads.insert(threadId);
  } else {
    if (!m.remote) threadOwner_.erase(threadId);
    m.threads.erase(threadId);
  }
  host_.threadChanged(sessionTid(m, threadId), started);
}

void RanksBackend::resume(std::int64_t sessionThread, bool singleThread, Reply<bool> reply) {
  std::int64_t threadId = 0;
  Member* owner = memberOf(sessionThread, &threadId);
  if (!owner) return reply(Error{errors::kBadArguments, "thread " + std::to_string(sessionThread) + " belongs to no process of this job", false});
  if (singleThread || !stopAll_) {
    owner->stopped = singleThread ? owner->stopped : false;
    std::weak_ptr<bool> alive = alive_;
    std::size_t index = owner->index;
    return owner->backend->resume(threadId, singleThread, [this, alive, index, threadId, reply](Result<bool> r) {
      if (!r) return reply(r.takeError());
      bool all = *r && stopAll_;
      reply(all);
      if (alive.expired() || all || !*r) return;
      // The rest of this member's threads went too; the other members stay stopped.
      asio::post(io_, [this, alive, index, threadId] {
        if (alive.expired()) return;
        const Member& mm = *members_[index];
        for (auto t : mm.threads)
          if (t != threadId) host_.continued(sessionTid(mm, t), false);
      });
    });
  }
  // Every member goes on (those still pausing too: the resume drops their pause).
  auto left = std::make_shared<std::size_t>(1);
  auto failed = std::make_shared<std::optional<Error>>();
  auto finish = [left, failed, reply] {
    if (--*left) return;
    if (*failed) return reply(std::move(**failed));
    reply(true);
  };
  for (auto& m : members_) {
    if (m->gone || !m->live || !(m->stopped || m->pausing || m.get() == owner)) continue;
    bool mine = m.get() == owner;
    m->stopped = m->pausing = false;
    ++*left;
    m->backend->resume(mine ? threadId : anyThread(*m), false, [mine, failed, finish](Result<bool> r) {
      if (!r && mine) *failed = r.takeError();
      finish();
    });
  }
  finish();
}

void RanksBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  StepOptions o = options;
  Member* owner = memberOf(options.threadId, &o.threadId);
  if (!owner) return reply(Error{errors::kBadArguments, "thread " + std::to_string(options.threadId) + " belongs to no process of this job", false});
  owner->stopped = false;
  if (stopAll_ || o.singleThread) return owner->backend->step(kind, o, std::move(reply));
  // The rest of this member's threads go too; the other members stay stopped.
  std::weak_ptr<bool> alive = alive_;
  std::size_t index = owner->index;
  std::int64_t threadId = o.threadId;
  owner->backend->step(kind, o, [this, alive, index, threadId, reply](Result<void> r) {
    bool ok = static_cast<bool>(r);
    reply(std::move(r));
    if (alive.expired() || !ok) return;
    asio::post(io_, [this, alive, index, threadId] {
      if (alive.expired()) return;
      const Member& mm = *members_[index];
      for (auto t : mm.threads)
        if (t != threadId) host_.continued(sessionTid(mm, t), false);
    });
  });
}

void RanksBackend::pause(std::int64_t sessionThread, Reply<void> reply) {
  std::int64_t threadId = 0;
  Member* owner = memberOf(sessionThread, &threadId);
  if (!owner && !members_.empty()) owner = members_.front().get();
  if (!owner) return reply(Error{errors::kBadArguments, "no process of the job has started yet", false});
  owner->backend->pause(threadId, std::move(reply));
}

// ---- the end -------------------------------------------------------------------------------------

void RanksBackend::onMemberExited(Member& m, const ExitStatus& status) {
  if (m.gone) return;
  m.gone = true;
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

}  // namespace strata::backends
