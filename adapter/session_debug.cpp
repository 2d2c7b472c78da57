// The session's side of debugging: backend stop/continue/thread/breakpoint reports sent as DAP
// events (convert.cpp makes them protocol types), which threads run, and the capabilities a
// backend adds after launch.
#include "adapter/session.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "adapter/capabilities.hpp"
#include "adapter/convert.hpp"

namespace strata::adapter {

namespace {

// The process a thread of this machine belongs to (/proc/TID/status's Tgid): a job's rank is
// not the session's process. 0 when it cannot be read (a thread of another machine).
std::int64_t tgidOf(std::int64_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Tgid:", 0) == 0) return std::atoll(line.c_str() + 5);
  return 0;
}

}  // namespace

Session::IdScope Session::idScope(std::int64_t thread) const {
  if (thread == 0) return {0, anyRan_};
  auto it = threadRan_.find(thread);
  return {thread, programRan_ + (it == threadRan_.end() ? 0 : it->second)};
}

void Session::threadsRan(const std::set<std::int64_t>& threads) {
  if (threads.empty() || threads.count(0)) return programRan();
  ++anyRan_;
  for (auto t : threads) ++threadRan_[t];
  frames_.forgetThreads(threads);
  variables_.forgetThreads(threads);
}

void Session::programRan() {
  ++anyRan_;
  ++programRan_;
  frames_.clear();
  variables_.clear();
}

void Session::threadsResumed(std::int64_t threadId, bool allThreads) {
  if (allThreads) run_ = RunState{true, {}};
  else if (run_.all) run_.except.erase(threadId);
  else run_.except.insert(threadId);
}

bool Session::threadRunning(std::int64_t threadId) const {
  return run_.all ? !run_.except.count(threadId) : run_.except.count(threadId) > 0;
}

std::optional<Error> Session::requireStopped(std::int64_t threadId, std::string_view command) const {
  if (!threadRunning(threadId)) return std::nullopt;
  return Error{errors::kThreadRunning,
               "thread " + std::to_string(threadId) + " is running: '" + std::string(command) +
                   "' needs it stopped (pause it, or wait until it stops)",
               false};
}

bool Session::takesCrashes(const backends::Backend* from) const {
  return options_.backendFactory.postMortem && from == debugger_ && !debuggeeEnded_;
}

void Session::stopped(backends::Backend* from, const backends::StopReport& stop) {
  // A stop starts a fresh set of frames for the threads it stops; ids from their earlier stop
  // must not resolve any more. Threads it leaves alone keep theirs.
  if (stop.allThreadsStopped || !stop.threadId) {
    programRan();
  } else {
    std::set<std::int64_t> fresh{*stop.threadId};
    fresh.insert(stop.alsoStopped.begin(), stop.alsoStopped.end());
    threadsRan(fresh);
  }
  ++stops_;
  if (stop.threadId) threadOwners_[*stop.threadId] = from;
  if (stop.allThreadsStopped) run_ = RunState{};
  else if (stop.threadId && run_.all) run_.except.insert(*stop.threadId);
  else if (stop.threadId) run_.except.erase(*stop.threadId);
  if (!stop.allThreadsStopped)
    for (auto t : stop.alsoStopped) {
      if (run_.all) run_.except.insert(t);
      else run_.except.erase(t);
    }
  sendEvent("stopped", json::value_from(toProtocol(*this, from, stop)));
  // The program's GPU collectors are drained now; GPU requests made meanwhile wait for it.
  if (from == debugger_)
    if (auto* g = gpu()) {
      g->programStopped();
      // A crash: what the GPU was doing then, said under the stop. The thread's own process
      // (a job's rank is not the session's process).
      if (stop.reason == "exception" && stop.threadId && stop.text.rfind("SIG", 0) == 0) {
        const std::int64_t pid = tgidOf(*stop.threadId);
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch());
        g->crashContext(pid > 0 ? pid : processId_, *stop.threadId, static_cast<std::uint64_t>(now.count()),
                        [weak = weak_from_this()](Result<std::string> text) {
                          auto self = weak.lock();
                          if (!self || self->ended_) return;
                          if (!text)
                            return self->output(backends::OutputCategory::Console, "GPU at the crash: " + text.error().message + "\n");
                          if (!text->empty()) self->output(backends::OutputCategory::Console, *text + "\n");
                        });
      }
    }
}

void Session::continued(backends::Backend* from, std::int64_t threadId, bool allThreads) {
  if (allThreads) programRan();
  else threadsRan({threadId});
  if (threadId) threadOwners_[threadId] = from;
  threadsResumed(threadId, allThreads);
  sendEvent("continued", json::value_from(protocol::ContinuedEventBody{threadId, allThreads}));
}

void Session::threadChanged(backends::Backend* from, std::int64_t threadId, bool started) {
  if (started) threadOwners_[threadId] = from;
  else threadOwners_.erase(threadId);
  sendEvent("thread", json::value_from(protocol::ThreadEventBody{started ? "started" : "exited", threadId}));
}

void Session::breakpointChanged(backends::Backend* from, const backends::BreakpointReport& state) {
  if (!state.id) return;  // the client cannot match a change without an id
  sendEvent("breakpoint", json::value_from(protocol::BreakpointEventBody{
                              "changed", toProtocol(*this, from, state)}));
}

void Session::moduleChanged(const backends::ModuleInfo& module, const std::string& reason) {
  sendEvent("module", json::object{{"reason", reason}, {"module", toJson(module)}});
}

void Session::progress(const backends::ProgressReport& report) {
  using Phase = backends::ProgressReport::Phase;
  // Only to clients that show progress (and never an update or end of one not started).
  if (!client_.supportsProgressReporting.value_or(false)) return;
  json::object body{{"progressId", report.id}};
  if (report.phase == Phase::Start) {
    if (!progress_.insert(report.id).second) return;
    body["title"] = report.title;
    body["cancellable"] = false;
  } else if (!progress_.count(report.id)) {
    return;
  }
  if (!report.message.empty()) body["message"] = report.message;
  if (report.percentage && report.phase != Phase::End) body["percentage"] = *report.percentage;
  if (report.phase == Phase::End) progress_.erase(report.id);
  sendEvent(report.phase == Phase::Start ? "progressStart" : report.phase == Phase::Update ? "progressUpdate" : "progressEnd",
            std::move(body));
}

void Session::gpuActivity(const backends::GpuActivityReport& r) {
  sendEvent("gpuActivity", toJson(r));
}

void Session::backendStarted() {
  // A launch that runs no program (a GPU trace) has no debugger to add capabilities.
  if (!debugger_) return sendEvent("initialized");
  protocol::Capabilities added = addedCapabilities(capabilities_, debugger_->features());
  // A backend that brings nothing new (the plain process runner) adds no event.
  if (!json::value_from(added).as_object().empty())
    sendEvent("capabilities", json::value_from(protocol::CapabilitiesEventBody{added}));
  sendEvent("initialized");
}

// ---- breakpoints set before there is a backend -------------------------------------------

std::vector<std::int64_t> Session::keepEarly(backends::BreakpointSet set) {
  auto kept = early_.keep(std::move(set));
  std::vector<std::int64_t> ids;
  for (auto local : kept->ids) ids.push_back(breakpoints_.add(nullptr, local));
  return ids;
}

void Session::applyEarlyBreakpoints() {
  if (!debugger_) return;
  std::weak_ptr<Session> weak = weak_from_this();
  // Set before the launch named its sourceMap: the client's paths, mapped now.
  if (!sourceMap_.empty()) early_.mapPaths([this](const std::string& p) { return sourceMap_.toDebuggee(p); });
  early_.replay(*debugger_, [weak](const backends::BreakpointBook::SetPtr& set, Result<backends::BreakpointBook::Reports> r) {
    auto self = weak.lock();
    if (!self || self->ended_ || self->debuggeeEnded_) return;
    // A backend that cannot place them says why, on each.
    auto states = backends::BreakpointBook::orReasons(*set, std::move(r));
    for (std::size_t i = 0; i < states.size() && i < set->ids.size(); ++i)
      self->placeHeld(nullptr, self->debugger_, set->ids[i], states[i]);  // early ids have no owner
  });
  early_.clear();
}

void Session::breakpointPlaced(backends::Backend* from, backends::Owner heldOwner, std::int64_t heldId,
                               const backends::BreakpointReport& placed) {
  placeHeld(heldOwner ? heldOwner : from, from, heldId, placed);
}

void Session::placeHeld(backends::Backend* heldOwner, backends::Backend* from, std::int64_t heldId,
                        const backends::BreakpointReport& placed) {
  auto id = breakpoints_.idOf(heldOwner, heldId);
  if (!id) return breakpointChanged(from, placed);
  // The id the client already holds now names the placed breakpoint.
  if (placed.id) breakpoints_.rebind(*id, placed.owner ? placed.owner : from, *placed.id);
  auto b = toProtocol(*this, from, placed);  // its id: the rebound one
  b.id = *id;
  sendEvent("breakpoint", json::value_from(protocol::BreakpointEventBody{"changed", std::move(b)}));
}

void Session::partGone(backends::Backend* part) {
  parts_.erase(part);
  frames_.forget(part);
  variables_.forget(part);
  sources_.forget(part);
  breakpoints_.forget(part);
}

}  // namespace strata::adapter
