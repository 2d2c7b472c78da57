// The session's side of debugging: backend stop/continue/thread/breakpoint reports turned into
// DAP events, session-global ids, and the capabilities a backend adds after launch.
#include "adapter/session.hpp"

namespace strata::adapter {

void Session::resumed() {
  frames_.clear();
  variables_.clear();
}

void Session::stopped(const backends::StopInfo& stop) {
  // A stop starts a fresh set of frames; ids from an earlier stop must not resolve any more.
  resumed();
  protocol::StoppedEventBody body;
  body.reason = stop.reason;
  body.threadId = stop.threadId;
  if (!stop.description.empty()) body.description = stop.description;
  if (!stop.text.empty()) body.text = stop.text;
  body.allThreadsStopped = stop.allThreadsStopped;
  if (!stop.hitBreakpointIds.empty()) {
    std::vector<std::int64_t> ids;
    for (auto local : stop.hitBreakpointIds) ids.push_back(breakpoints_.add(backend_.get(), local));
    body.hitBreakpointIds = std::move(ids);
  }
  sendEvent("stopped", json::value_from(body));
}

void Session::continued(std::int64_t threadId, bool allThreads) {
  resumed();
  sendEvent("continued", json::value_from(protocol::ContinuedEventBody{threadId, allThreads}));
}

void Session::threadChanged(std::int64_t threadId, bool started) {
  sendEvent("thread", json::value_from(protocol::ThreadEventBody{started ? "started" : "exited", threadId}));
}

void Session::breakpointChanged(const backends::BreakpointState& state) {
  if (!state.id) return;  // the client cannot match a change without an id
  sendEvent("breakpoint", json::value_from(protocol::BreakpointEventBody{
                              "changed", toProtocol(backend_.get(), state)}));
}

void Session::moduleChanged(const backends::ModuleInfo& module, const std::string& reason) {
  json::object m{{"id", module.id}, {"name", module.name}};
  if (!module.path.empty()) m["path"] = module.path;
  if (!module.symbolStatus.empty()) m["symbolStatus"] = module.symbolStatus;
  if (!module.addressRange.empty()) m["addressRange"] = module.addressRange;
  sendEvent("module", json::object{{"reason", reason}, {"module", std::move(m)}});
}

protocol::Breakpoint Session::toProtocol(backends::Backend* owner, const backends::BreakpointState& s) {
  protocol::Breakpoint b;
  if (s.id) b.id = breakpoints_.add(owner, *s.id);
  b.verified = s.verified;
  b.line = s.line;
  if (!s.message.empty()) b.message = s.message;
  if (!s.verified) b.reason = s.pending ? "pending" : "failed";
  if (s.path) {
    protocol::Source src;
    src.path = s.path;
    b.source = std::move(src);
  }
  return b;
}

protocol::Source Session::toProtocol(backends::Backend* owner, const backends::SourceInfo& s) {
  protocol::Source src;
  if (!s.name.empty()) src.name = s.name;
  src.path = s.path;
  if (s.reference > 0) src.sourceReference = sources_.add(owner, s.reference);
  if (!s.presentationHint.empty()) src.presentationHint = s.presentationHint;
  return src;
}

void Session::announceBackendCapabilities() {
  if (!backend_) return;
  backends::BackendFeatures f = backend_->features();
  protocol::Capabilities c;
  auto set = [](std::optional<bool>& field, bool value) {
    if (value) field = true;
  };
  set(c.supportsConditionalBreakpoints, f.conditionalBreakpoints);
  set(c.supportsHitConditionalBreakpoints, f.hitConditionalBreakpoints);
  set(c.supportsLogPoints, f.logPoints);
  set(c.supportsFunctionBreakpoints, f.functionBreakpoints);
  set(c.supportsEvaluateForHovers, f.evaluateForHovers);
  set(c.supportsSetVariable, f.setVariable);
  set(c.supportsSetExpression, f.setExpression);
  set(c.supportsCompletionsRequest, f.completions);
  set(c.supportsExceptionInfoRequest, f.exceptionInfo);
  set(c.supportsDelayedStackTraceLoading, f.delayedStackTraceLoading);
  set(c.supportsClipboardContext, f.clipboardContext);
  set(c.supportsSingleThreadExecutionRequests, f.singleThreadExecution);
  set(c.supportsSteppingGranularity, f.steppingGranularity);
  set(c.supportsDataBreakpoints, f.dataBreakpoints);
  set(c.supportsInstructionBreakpoints, f.instructionBreakpoints);
  set(c.supportsReadMemoryRequest, f.readMemory);
  set(c.supportsWriteMemoryRequest, f.writeMemory);
  set(c.supportsDisassembleRequest, f.disassemble);
  set(c.supportsModulesRequest, f.modules);
  set(c.supportsStepInTargetsRequest, f.stepInTargets);
  if (!f.exceptionFilters.empty()) {
    std::vector<protocol::ExceptionBreakpointsFilter> filters;
    for (const auto& x : f.exceptionFilters) {
      protocol::ExceptionBreakpointsFilter p;
      p.filter = x.filter;
      p.label = x.label;
      if (!x.description.empty()) p.description = x.description;
      p.default_ = x.enabledByDefault;
      if (x.supportsCondition) p.supportsCondition = true;
      if (!x.conditionDescription.empty()) p.conditionDescription = x.conditionDescription;
      filters.push_back(std::move(p));
    }
    c.exceptionBreakpointFilters = std::move(filters);
    c.supportsExceptionFilterOptions = true;
  }
  // A backend that brings nothing (the plain process runner) adds no event.
  if (json::value_from(c).as_object().empty()) return;
  sendEvent("capabilities", json::value_from(protocol::CapabilitiesEventBody{c}));
}

}  // namespace strata::adapter
