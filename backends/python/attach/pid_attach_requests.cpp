// Attach by pid: every request goes to the agent once it is in, and is answered from the
// read-only snapshot of the process's memory until then (pid_attach_backend.hpp).
#include "backends/python/attach/pid_attach_backend.hpp"

#include <signal.h>

#include <filesystem>

#include "backends/python/attach/injector.hpp"
#include "strata/hex.hpp"

namespace strata::backends {

namespace fs = std::filesystem;
namespace pa = strata::python::attach;

namespace {
// A snapshot frame's id: its thread's index times this, plus its own index + 1.
constexpr std::int64_t kFramesPerThread = 100000;
}  // namespace

// ---- requests: to the agent once it is in; else answered from the snapshot ----

void PidAttachBackend::processFacts(Reply<ProcessFacts> reply) {
  if (!agentIn_ || !agent_)
    return reply(Error{errors::kAgentUnavailable, "the agent is not in process " + std::to_string(pid_) + " yet", false});
  agent_->processFacts(std::move(reply));
}

void PidAttachBackend::configurationDone(Reply<void> reply) {
  configured_ = true;
  if (agentIn_) return agent_->configurationDone(std::move(reply));
  reply({});
  reportSnapshotStop();
  // The agent is brought in once the client is configured: until then (and until it dials
  // back) every request is answered from the snapshot, and a client that only looks (strata
  // attach without --break) leaves nothing of Strata in the process.
  if (readOnly_.empty() && !agent_) {
    startAgent();
    if (!readOnly_.empty()) host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
  }
}

void PidAttachBackend::reportSnapshotStop() {
  if (agentIn_ || ended_ || snap_.threads.empty()) return;
  snapshotShown_ = true;
  StopReport stop;
  stop.reason = "pause";
  stop.threadId = snap_.threads.front().tid;
  for (const auto& t : snap_.threads)
    if (t.tid == pid_) stop.threadId = t.tid;
  stop.description = "Snapshot (read-only)";
  stop.text = readOnlyText();
  stop.allThreadsStopped = true;
  host_.stopped(stop);
}

// Breakpoints kept until the agent is in: answered as pending under ids of ours, which the
// client keeps when they are placed (onAgentIn).
void PidAttachBackend::keepOrSend(BreakpointSet set, const std::string& why,
                                  Reply<std::vector<BreakpointReport>> reply) {
  if (agentIn_) return BreakpointBook::send(*agent_, set, std::move(reply));
  reply(BreakpointBook::held(*kept_.keep(std::move(set)), why));
}

void PidAttachBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  std::string why = set.kind == BreakpointSet::Kind::Source ? "set once the Strata agent is in: " + readOnlyText()
                                                           : "set once the Strata agent is in";
  keepOrSend(set, why, std::move(reply));
}

void PidAttachBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  if (agentIn_) return agent_->threads(std::move(reply));
  std::vector<ThreadInfo> out;
  for (const auto& t : snap_.threads) out.push_back(ThreadInfo{t.tid, t.name + (t.python ? "" : " (no Python)")});
  reply(std::move(out));
}

void PidAttachBackend::terminate(bool force, Reply<void> reply) {
  if (agentIn_) return agent_->terminate(force, std::move(reply));
  if (::kill(static_cast<pid_t>(pid_), force ? SIGKILL : SIGTERM) != 0)
    return reply(errnoError(errors::kSystemCallFailed, "kill process " + std::to_string(pid_)));
  terminatedBy_ = force ? SIGKILL : SIGTERM;
  if (snap_.stoppedBySignal && !force) ::kill(static_cast<pid_t>(pid_), SIGCONT);
  reply({});
}

void PidAttachBackend::detach(Reply<void> reply) {
  waitTimer_.cancel();
  exitTimer_.cancel();
  if (agentIn_) {
    ended_ = true;
    return agent_->detach(std::move(reply));
  }
  // Nothing of ours runs in the process; a bootstrap still queued becomes `pass`.
  ended_ = true;
  agent_.reset();
  if (bootstrap_) {
    auto cancelled = remoteExec_ ? pa::cancelRemoteExec(*remote_, *bootstrap_) : pa::cancelBootstrap(*remote_, *bootstrap_);
    if (!cancelled)
      host_.output(OutputCategory::Console, "The queued agent bootstrap could not be cancelled (" + cancelled.error().message +
                                                "): if it runs, it finds no one listening and does nothing.\n");
    else
      removeScript();
  }
  reply({});
}

void PidAttachBackend::resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  if (agentIn_) return agent_->resume(threadId, singleThread, std::move(reply));
  snapshotShown_ = false;
  if (snap_.stoppedBySignal && pa::processState(static_cast<pid_t>(pid_)) == 'T') {
    if (::kill(static_cast<pid_t>(pid_), SIGCONT) != 0)
      return reply(errnoError(errors::kSystemCallFailed, "SIGCONT process " + std::to_string(pid_)));
    snap_.stoppedBySignal = false;
    reply(true);
    host_.output(OutputCategory::Console, "Process " + std::to_string(pid_) + " continued (SIGCONT).\n");
    if (!agent_) {
      readOnly_.clear();
      if (auto r = refresh(); !r) readOnly_ = r.error().message;
      else startAgent();
      if (!readOnly_.empty()) host_.output(OutputCategory::Important, "Read-only session: " + readOnly_ + ".\n");
    }
    return;
  }
  reply(true);
}

void PidAttachBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  if (agentIn_) return agent_->step(kind, options, std::move(reply));
  reply(Error{errors::kWrongState, "cannot step: " + readOnlyText(), true});
}

void PidAttachBackend::pause(std::int64_t threadId, Reply<void> reply) {
  if (agentIn_) return agent_->pause(threadId, std::move(reply));
  if (auto r = refresh(); !r) return reply(r.takeError());
  reply({});
  reportSnapshotStop();
}

const pa::SnapshotFrame* PidAttachBackend::frameOf(std::int64_t frameId) const {
  std::int64_t thread = frameId / kFramesPerThread, index = frameId % kFramesPerThread - 1;
  if (frameId <= 0 || thread >= static_cast<std::int64_t>(snap_.threads.size()) || index < 0 ||
      index >= static_cast<std::int64_t>(snap_.threads[thread].frames.size()))
    return nullptr;
  return &snap_.threads[thread].frames[index];
}

void PidAttachBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) {
  if (agentIn_) return agent_->stackTrace(threadId, startFrame, levels, std::move(reply));
  for (std::size_t ti = 0; ti < snap_.threads.size(); ++ti) {
    const auto& t = snap_.threads[ti];
    if (t.tid != threadId) continue;
    StackPage page;
    page.totalFrames = static_cast<std::int64_t>(t.frames.size());
    std::size_t end = levels > 0 ? std::min(t.frames.size(), static_cast<std::size_t>(startFrame + levels)) : t.frames.size();
    for (std::size_t i = static_cast<std::size_t>(std::max<std::int64_t>(startFrame, 0)); i < end; ++i) {
      const auto& f = t.frames[i];
      FrameInfo info;
      info.id = static_cast<std::int64_t>(ti) * kFramesPerThread + static_cast<std::int64_t>(i) + 1;
      info.name = f.function;
      info.line = f.line;
      info.column = f.line ? 1 : 0;
      if (!f.file.empty()) {
        SourceInfo src;
        src.name = fs::path(f.file).filename().string();
        src.path = f.file;
        info.source = std::move(src);
      }
      if (!f.python) {
        if (info.name.find(f.module) == std::string::npos) info.name += " (" + f.module + ")";
        info.presentationHint = "subtle";
        info.instructionPointerReference = hexAddress(f.pc);
      }
      page.frames.push_back(std::move(info));
    }
    return reply(std::move(page));
  }
  reply(Error{errors::kBadArguments, "no thread " + std::to_string(threadId) + " in process " + std::to_string(pid_), true});
}

void PidAttachBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  if (agentIn_) return agent_->scopes(frameId, std::move(reply));
  const auto* f = frameOf(frameId);
  if (!f) return reply(Error{errors::kUnknownFrame, "no frame " + std::to_string(frameId) + " in the snapshot", true});
  std::vector<ScopeInfo> out;
  if (f->python && f->locals) {
    ScopeInfo s;
    s.name = "Locals";
    s.presentationHint = "locals";
    s.variablesReference = frameId;
    s.namedVariables = static_cast<std::int64_t>(f->locals->size());
    out.push_back(std::move(s));
  }
  reply(std::move(out));
}

void PidAttachBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  if (agentIn_) return agent_->variables(query, std::move(reply));
  const auto* f = frameOf(query.variablesReference);
  if (!f || !f->locals)
    return reply(Error{errors::kUnknownReference, "no variables " + std::to_string(query.variablesReference) + " in the snapshot", true});
  std::vector<ValueInfo> out;
  for (const auto& l : *f->locals) {
    ValueInfo v;
    v.name = l.name;
    v.type = l.type;
    static const std::set<std::string> simple{"int", "float", "str", "bytes", "bool", "NoneType"};
    if (simple.count(l.type)) v.value = l.value;
    else v.value = "<" + l.type + (l.value.empty() ? "" : " " + l.value) + "> (its contents need the Strata agent)";
    out.push_back(std::move(v));
  }
  reply(std::move(out));
}

void PidAttachBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  if (agentIn_) return agent_->evaluate(query, std::move(reply));
  reply(Error{errors::kWrongState, "cannot evaluate: " + readOnlyText(), true});
}

void PidAttachBackend::setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                                   Reply<ValueInfo> reply) {
  if (agentIn_) return agent_->setVariable(variablesReference, name, value, std::move(reply));
  reply(Error{errors::kWrongState, "cannot set a variable: " + readOnlyText(), true});
}

void PidAttachBackend::setExpression(const std::string& expression, const std::string& value,
                                     std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
  if (agentIn_) return agent_->setExpression(expression, value, frameId, std::move(reply));
  reply(Error{errors::kWrongState, "cannot set an expression: " + readOnlyText(), true});
}

void PidAttachBackend::completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) {
  if (agentIn_) return agent_->completions(query, std::move(reply));
  reply(std::vector<CompletionEntry>{});
}

void PidAttachBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  if (agentIn_) return agent_->exceptionInfo(threadId, std::move(reply));
  reply(Error{errors::kNoException, "no exception: " + readOnlyText(), true});
}

void PidAttachBackend::source(std::int64_t sourceReference, Reply<SourceContent> reply) {
  if (agentIn_) return agent_->source(sourceReference, std::move(reply));
  reply(Error{errors::kUnsupportedRequest, "no source references in a read-only session", true});
}

}  // namespace strata::backends
