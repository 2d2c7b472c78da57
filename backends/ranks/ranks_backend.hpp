// A distributed job as one debug session: every rank process (and the launcher, when it runs
// Python) is a member with its own Python agent; requests are routed to the member that owns a
// thread or an id, breakpoints go to every member (or those rankFilter names), a stop in one
// member stops the others (stopAll), and processes that are not ranks (DataLoader workers, a
// subprocess of a rank) are offered to the client as child sessions (startDebugging).
#pragma once

#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "backends/backend.hpp"
#include "backends/breakpoint_book.hpp"
#include "backends/process/process_backend.hpp"
#include "strata/protocol/transport.hpp"

namespace strata::backends {

class PythonBackend;
class PidAttachBackend;

class RanksBackend final : public Backend {
 public:
  RanksBackend(asio::io_context& io, BackendHost& host);
  ~RanksBackend() override;

  std::string name() const override { return "ranks"; }
  BackendFeatures features() const override;
  // ---- the job: its members start, are configured and end together ----
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void abandonStart() override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  // ---- breakpoints: one set for every member (ranks_breakpoints.cpp) ----
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  // ---- by thread: to the member that owns it (ranks_execution.cpp, ranks_inspect.cpp) ----
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  // ---- a frame's values: frames, variables and sources belong to the member that gave them
  // (FrameInfo::owner), and the session sends what names them there; what names none comes
  // here, for the last member that stopped ----
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value, std::optional<std::int64_t> frameId,
                     Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;

 private:
  class Port;
  struct Member {
    std::size_t index = 0;
    std::int64_t pid = 0;
    std::optional<std::int64_t> rank;
    bool root = false;             // the process the launch started
    bool remote = false;           // on another machine (dialed from off this host)
    std::string host;              // its host name, when remote
    bool viaAdapter = false;       // a node's strata-dap, serving that node's ranks
    std::unique_ptr<Port> port;
    std::unique_ptr<Backend> backend;
    // After a crash: the backend (and its port) the native debugger took this member over from,
    // kept until the member is gone, saying nothing more.
    std::unique_ptr<Port> supersededPort;
    std::unique_ptr<Backend> supersededBackend;
    PythonBackend* python = nullptr;      // a launched member (dialed the ranks listener)
    PidAttachBackend* attached = nullptr; // an attached one (by pid)
    bool ready = false;       // attach or adopt answered
    bool live = false;        // its agent serves requests (not a read-only snapshot)
    bool configured = false;  // configurationDone sent
    bool gone = false;
    bool stopped = false;
    bool pausing = false;     // a pause sent because another member stopped (stopAll)
    bool breakpointsOn = true;  // rankFilter lets its breakpoints in
    std::set<std::int64_t> threads;
    std::string lastStopReason;
  };
  // Where each entry of a kept set (book_) is placed: by member, its report; and what the
  // client was last told of it.
  struct Placement {
    std::vector<std::map<std::size_t, BreakpointReport>> placed;
    std::vector<BreakpointReport> told;
  };
  using SetPtr = BreakpointBook::SetPtr;

  Member& newMember(std::int64_t pid);
  // A member's backend: the session routes the ids it hands out to it, until it is gone.
  void setBackend(Member& m, std::unique_ptr<Backend> backend);
  void memberGone(Member& m);
  BackendHost& hostOf(Member& m);  // the host a member's backend reports through
  // Thread ids: a member on this machine keeps its OS tids; a thread of one on another machine
  // gets an id of its own from 2^30 up (above any Linux tid, within DAP's int32), so the tids of
  // two machines never meet.
  static constexpr std::int64_t kRemoteThreads = std::int64_t{1} << 30;
  std::int64_t sessionTid(const Member& m, std::int64_t tid);
  Member* memberOf(std::int64_t threadId, std::int64_t* local = nullptr);
  void acceptMember(asio::ip::tcp::socket socket);
  void adoptMember(asio::ip::tcp::socket socket, std::int64_t pid);
  Member* memberByPid(std::int64_t pid);
  Member* lastStoppedMember();
  std::string label(const Member& m) const;
  bool rankWanted(const Member& m) const;
  void onAccept(asio::ip::tcp::socket socket);
  void handOver(asio::ip::tcp::socket socket, std::int64_t pid, std::string parent);
  void memberReady(Member& m);
  void learnRank(Member& m, std::function<void()> then);
  void configureMember(Member& m);
  void announceThreads(Member& m);
  void applySet(Member& m, const SetPtr& set, std::function<void()> done);
  void applyAll(Member& m, std::function<void()> done);
  void sendSet(BreakpointSet set, Reply<std::vector<BreakpointReport>> reply);
  BreakpointReport merged(const BreakpointSet& set, std::size_t i) const;
  void tellChanges(const BreakpointSet& set);
  void fromMember(Member& m, const BreakpointSet& set, const std::vector<BreakpointReport>& reports);
  std::int64_t bookId(const Member& m, std::int64_t theirs) const;
  // Reports from members (their Port).
  void onStopped(Member& m, StopReport stop);
  void reportStop(Member& m, StopReport stop);
  void onContinued(Member& m, std::int64_t threadId, bool allThreads);
  void onThread(Member& m, std::int64_t threadId, bool started);
  void onBreakpoint(Member& m, const BreakpointReport& report);
  void onMemberExited(Member& m, const ExitStatus& status);
  // A member's agent caught a fatal signal: the native debugger takes it over.
  void onMemberCrashed(Member& m, const CrashReport& crash, std::function<void()> release);
  void onLauncherExited(const ExitStatus& status);
  void maybeEnd();
  void pauseOthers(const Member& except);
  std::int64_t anyThread(const Member& m) const;

  asio::io_context& io_;
  BackendHost& host_;
  std::unique_ptr<Port> launcherPort_;
  std::unique_ptr<ProcessBackend> launcher_;
  std::int64_t launcherPid_ = 0;
  std::unique_ptr<protocol::Listener> listener_;
  std::string ranksHost_ = "127.0.0.1";
  std::string token_;
  asio::steady_timer endTimer_;
  std::vector<std::unique_ptr<Member>> members_;
  std::map<std::int64_t, std::size_t> threadOwner_;
  std::map<std::pair<std::size_t, std::int64_t>, std::int64_t> remoteTids_;  // (member, its tid) -> ours
  std::map<std::int64_t, std::pair<std::size_t, std::int64_t>> remoteThreads_;  // ours -> (member, its tid)
  std::int64_t nextRemoteTid_ = kRemoteThreads;
  BreakpointBook book_;  // every set the client sent: each member gets them as it comes
  std::map<std::string, Placement> placements_;  // by set key
  std::vector<std::int64_t> rankFilter_;
  bool stopAll_ = true;
  std::string coreOnCrash_;  // the launch's coreOnCrash, for the cores of members that crash
  bool justMyCode_ = true;
  bool configured_ = false;
  bool attaching_ = false;
  bool ending_ = false, ended_ = false;
  std::optional<ExitStatus> launcherExit_;
  ExitStatus lastExit_;
  std::optional<std::size_t> lastStopped_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
