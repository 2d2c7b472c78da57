// Every conversion between the backend model and DAP's types, in one place.
#include "adapter/convert.hpp"

#include "adapter/handlers/base64.hpp"

namespace strata::adapter {

namespace {

// A child reference made session-global (0 stays 0: no children). A reference from a stop that
// is over is not handed out (the backend may already use its number for something else), and
// the value shows no children.
std::int64_t globalRef(Session& session, backends::Backend* owner, std::int64_t local, const Session::IdScope& scope) {
  if (local <= 0 || !session.current(scope)) return 0;
  return session.variableRefs().add(owner, local, scope.thread);
}

protocol::VariablePresentationHint toProtocol(const backends::ValueHint& h) {
  protocol::VariablePresentationHint p;
  if (!h.kind.empty()) p.kind = h.kind;
  if (!h.visibility.empty()) p.visibility = h.visibility;
  if (!h.attributes.empty()) p.attributes = h.attributes;
  if (h.lazy) p.lazy = true;
  return p;
}

// What evaluate and setVariable/setExpression answer alike about a value, besides its text.
// Where a scope's or a value's children are: a session-global reference, with their counts.
template <class Out, class In>
void children(Session& session, backends::Backend* owner, const In& in, const Session::IdScope& scope, Out& out) {
  out.variablesReference = globalRef(session, owner, in.variablesReference, scope);
  out.namedVariables = in.namedVariables;
  out.indexedVariables = in.indexedVariables;
}

template <class Body>
void describeValue(Session& session, backends::Backend* owner, const backends::ValueInfo& v,
                   const Session::IdScope& scope, Body& out) {
  if (!v.type.empty()) out.type = v.type;
  if (v.hint) out.presentationHint = toProtocol(*v.hint);
  children(session, v.owner ? v.owner : owner, v, scope, out);
}

protocol::Source sourceWithPath(const std::optional<std::string>& path) {
  protocol::Source src;
  src.path = path;
  return src;
}

}  // namespace

// ---- requests -----------------------------------------------------------------------------------

std::vector<backends::SourceBreakpointSpec> toSpecs(const protocol::SetBreakpointsArguments& args) {
  std::vector<backends::SourceBreakpointSpec> specs;
  if (args.breakpoints) {
    for (const auto& b : *args.breakpoints)
      specs.push_back({b.line, b.column, b.condition, b.hitCondition, b.logMessage});
  } else if (args.lines) {
    for (auto line : *args.lines) specs.push_back({line, {}, {}, {}, {}});
  }
  return specs;
}

std::vector<backends::FunctionBreakpointSpec> toSpecs(const protocol::SetFunctionBreakpointsArguments& args) {
  std::vector<backends::FunctionBreakpointSpec> specs;
  for (const auto& b : args.breakpoints) specs.push_back({b.name, b.condition, b.hitCondition});
  return specs;
}

std::vector<backends::InstructionBreakpointSpec> toSpecs(const protocol::SetInstructionBreakpointsArguments& args) {
  std::vector<backends::InstructionBreakpointSpec> specs;
  for (const auto& b : args.breakpoints)
    specs.push_back({b.instructionReference, b.offset.value_or(0), b.condition, b.hitCondition});
  return specs;
}

std::vector<backends::DataBreakpointSpec> toSpecs(const protocol::SetDataBreakpointsArguments& args) {
  std::vector<backends::DataBreakpointSpec> specs;
  for (const auto& b : args.breakpoints)
    specs.push_back({b.dataId, b.accessType.value_or("write"), b.condition, b.hitCondition});
  return specs;
}

std::vector<backends::ExceptionFilterSpec> toSpecs(const protocol::SetExceptionBreakpointsArguments& args) {
  std::vector<backends::ExceptionFilterSpec> specs;
  for (const auto& f : args.filters) specs.push_back({f, std::nullopt});
  if (args.filterOptions)
    for (const auto& o : *args.filterOptions) specs.push_back({o.filterId, o.condition});
  return specs;
}

std::optional<backends::Granularity> toGranularity(const std::string& name) {
  if (name == "statement") return backends::Granularity::Statement;
  if (name == "line") return backends::Granularity::Line;
  if (name == "instruction") return backends::Granularity::Instruction;
  return std::nullopt;
}

// ---- answers and events ---------------------------------------------------------------------------

protocol::Breakpoint toProtocol(Session& session, backends::Backend* owner, const backends::BreakpointReport& s) {
  protocol::Breakpoint b;
  if (s.id) b.id = session.breakpointIds().add(s.owner ? s.owner : owner, *s.id);
  b.verified = s.verified;
  b.line = s.line;
  if (!s.message.empty()) b.message = s.message;
  if (!s.verified) b.reason = s.pending ? "pending" : "failed";
  if (s.path) b.source = sourceWithPath(session.sourceMap().toClient(*s.path));
  return b;
}

protocol::Source toProtocol(Session& session, backends::Backend* owner, const backends::SourceInfo& s) {
  protocol::Source src;
  if (!s.name.empty()) src.name = s.name;
  if (s.path) src.path = session.sourceMap().toClient(*s.path);
  if (s.reference > 0) src.sourceReference = session.sources().add(s.owner ? s.owner : owner, s.reference);
  if (!s.presentationHint.empty()) src.presentationHint = s.presentationHint;
  return src;
}

protocol::StackTraceBody toProtocol(Session& session, backends::Backend* owner, const backends::StackPage& page,
                                    const Session::IdScope& scope) {
  protocol::StackTraceBody out;
  for (const auto& f : page.frames) {
    protocol::StackFrame p;
    auto* frameOwner = f.owner ? f.owner : owner;  // a composite's part, or the backend itself
    p.id = session.frames().add(frameOwner, f.id, scope.thread);
    p.name = f.name;
    if (f.source) p.source = toProtocol(session, frameOwner, *f.source);
    p.line = f.line;
    p.column = f.column;
    if (!f.presentationHint.empty()) p.presentationHint = f.presentationHint;
    if (!f.instructionPointerReference.empty()) p.instructionPointerReference = f.instructionPointerReference;
    if (!f.moduleId.empty()) p.moduleId = f.moduleId;
    out.stackFrames.push_back(std::move(p));
  }
  out.totalFrames = page.totalFrames;
  return out;
}

protocol::ScopesBody toProtocol(Session& session, backends::Backend* owner, const std::vector<backends::ScopeInfo>& scopes,
                                const Session::IdScope& scope) {
  protocol::ScopesBody out;
  for (const auto& s : scopes) {
    protocol::Scope p;
    p.name = s.name;
    if (!s.presentationHint.empty()) p.presentationHint = s.presentationHint;
    children(session, owner, s, scope, p);
    p.expensive = s.expensive;
    out.scopes.push_back(std::move(p));
  }
  return out;
}

protocol::VariablesBody toProtocol(Session& session, backends::Backend* owner, const std::vector<backends::ValueInfo>& values,
                                   const Session::IdScope& scope) {
  protocol::VariablesBody out;
  for (const auto& v : values) {
    protocol::Variable p;
    p.name = v.name;
    p.value = v.value;
    if (!v.type.empty()) p.type = v.type;
    if (!v.evaluateName.empty()) p.evaluateName = v.evaluateName;
    if (v.hint) p.presentationHint = toProtocol(*v.hint);
    children(session, v.owner ? v.owner : owner, v, scope, p);
    if (!v.memoryReference.empty()) p.memoryReference = v.memoryReference;
    out.variables.push_back(std::move(p));
  }
  return out;
}

protocol::EvaluateResponseBody toEvaluateBody(Session& session, backends::Backend* owner, const backends::ValueInfo& v,
                                             const Session::IdScope& scope) {
  protocol::EvaluateResponseBody out;
  out.result = v.value;
  describeValue(session, owner, v, scope, out);
  if (!v.memoryReference.empty()) out.memoryReference = v.memoryReference;
  return out;
}

protocol::SetValueResponseBody toSetValueBody(Session& session, backends::Backend* owner, const backends::ValueInfo& v,
                                              const Session::IdScope& scope) {
  protocol::SetValueResponseBody out;
  out.value = v.value;
  describeValue(session, owner, v, scope, out);
  return out;
}

protocol::StoppedEventBody toProtocol(Session& session, backends::Backend* owner, const backends::StopReport& stop) {
  protocol::StoppedEventBody body;
  body.reason = stop.reason;
  body.threadId = stop.threadId;
  if (!stop.description.empty()) body.description = stop.description;
  if (!stop.text.empty()) body.text = stop.text;
  body.allThreadsStopped = stop.allThreadsStopped;
  if (!stop.hitBreakpointIds.empty()) {
    std::vector<std::int64_t> ids;
    auto* bpOwner = stop.breakpointsOwner ? stop.breakpointsOwner : owner;
    for (auto local : stop.hitBreakpointIds) ids.push_back(session.breakpointIds().add(bpOwner, local));
    body.hitBreakpointIds = std::move(ids);
  }
  return body;
}

protocol::ThreadsBody toProtocol(const std::vector<backends::ThreadInfo>& threads) {
  protocol::ThreadsBody out;
  for (const auto& t : threads) out.threads.push_back(protocol::Thread{t.id, t.name});
  return out;
}

protocol::CompletionsBody toProtocol(const std::vector<backends::CompletionEntry>& entries) {
  protocol::CompletionsBody out;
  for (const auto& c : entries) {
    protocol::CompletionItem p;
    p.label = c.label;
    if (!c.text.empty()) p.text = c.text;
    if (!c.type.empty()) p.type = c.type;
    p.start = c.start;
    p.length = c.length;
    out.targets.push_back(std::move(p));
  }
  return out;
}

protocol::ExceptionInfoResponseBody toProtocol(const backends::ExceptionInfo& info) {
  protocol::ExceptionInfoResponseBody out;
  out.exceptionId = info.exceptionId;
  if (!info.description.empty()) out.description = info.description;
  out.breakMode = info.breakMode.empty() ? "always" : info.breakMode;
  protocol::ExceptionDetails d;
  if (!info.message.empty()) d.message = info.message;
  if (!info.typeName.empty()) d.typeName = info.typeName;
  if (!info.fullTypeName.empty()) d.fullTypeName = info.fullTypeName;
  if (!info.stackTrace.empty()) d.stackTrace = info.stackTrace;
  out.details = std::move(d);
  return out;
}

protocol::SourceResponseBody toProtocol(const backends::SourceContent& content) {
  protocol::SourceResponseBody out;
  out.content = content.content;
  if (!content.mimeType.empty()) out.mimeType = content.mimeType;
  return out;
}

protocol::ExceptionBreakpointsFilter toProtocol(const backends::ExceptionFilter& x) {
  protocol::ExceptionBreakpointsFilter p;
  p.filter = x.filter;
  p.label = x.label;
  if (!x.description.empty()) p.description = x.description;
  p.default_ = x.enabledByDefault;
  if (x.supportsCondition) p.supportsCondition = true;
  if (!x.conditionDescription.empty()) p.conditionDescription = x.conditionDescription;
  return p;
}

json::object toJson(const backends::ModuleInfo& module) {
  json::object o{{"id", module.id}, {"name", module.name}};
  if (!module.path.empty()) o["path"] = module.path;
  if (!module.symbolStatus.empty()) o["symbolStatus"] = module.symbolStatus;
  if (!module.addressRange.empty()) o["addressRange"] = module.addressRange;
  return o;
}

json::value toJson(const backends::MemoryContents& memory) {
  json::object out{{"address", memory.address}};
  if (memory.unreadableBytes > 0) out["unreadableBytes"] = memory.unreadableBytes;
  out["data"] = base64Encode(memory.data);
  return out;
}

json::value toJson(const backends::DataBreakpointTarget& target) {
  json::object out{{"description", target.description}};
  out["dataId"] = target.dataId ? json::value(*target.dataId) : json::value(nullptr);
  if (!target.accessTypes.empty()) {
    json::array types;
    for (const auto& t : target.accessTypes) types.push_back(json::value(t));
    out["accessTypes"] = std::move(types);
  }
  return out;
}

json::value toJson(const std::vector<backends::StepInTargetInfo>& targets) {
  json::array list;
  for (const auto& t : targets) {
    json::object o{{"id", t.id}, {"label", t.label}};
    if (t.line) o["line"] = *t.line;
    list.push_back(std::move(o));
  }
  return json::object{{"targets", std::move(list)}};
}

json::value toJson(Session& session, backends::Backend* owner, const std::vector<backends::InstructionInfo>& instructions) {
  json::array list;
  for (const auto& i : instructions) {
    json::object o{{"address", i.address}, {"instruction", i.instruction}};
    if (!i.bytes.empty()) o["instructionBytes"] = i.bytes;
    if (!i.symbol.empty()) o["symbol"] = i.symbol;
    if (i.location) o["location"] = json::value_from(toProtocol(session, owner, *i.location));
    if (i.line) o["line"] = *i.line;
    if (!i.presentationHint.empty()) o["presentationHint"] = i.presentationHint;
    list.push_back(std::move(o));
  }
  return json::object{{"instructions", std::move(list)}};
}

json::value toJson(const backends::GpuActivityReport& a) {
  return json::object{{"counts", json::object{{"records", a.records}, {"kernels", a.kernels}, {"copies", a.copies}}},
                      {"timeSpan", json::object{{"startNs", a.startNs}, {"endNs", a.endNs}}},
                      {"dropped", a.dropped}};
}

}  // namespace strata::adapter
