// Agent JSON <-> neutral types. The agent's bodies are DAP's, so protocol/'s codec reads them:
// a missing or mistyped field is an error that names it ("stackFrames[2].line: ..."), never a
// silent default.
#include "backends/python/proxy/translate.hpp"

#include "strata/protocol/debug_types.hpp"
#include "strata/protocol/types.hpp"

namespace strata::backends::agent {
namespace {

void putOpt(json::object& o, const char* key, const std::optional<std::string>& v) {
  if (v) o[key] = *v;
}

template <class Body>
Result<Body> decodeBody(const json::value& body, const char* what) {
  auto r = protocol::decode<Body>(body, what);
  if (!r) {
    Error e = r.takeError();
    e.message = "the agent's " + e.message;
    return e;
  }
  return r;
}

std::optional<ValueHint> hint(const std::optional<protocol::VariablePresentationHint>& h) {
  if (!h) return std::nullopt;
  ValueHint out;
  out.kind = h->kind.value_or("");
  out.visibility = h->visibility.value_or("");
  out.lazy = h->lazy.value_or(false);
  if (h->attributes) out.attributes = *h->attributes;
  return out;
}

BreakpointReport report(const protocol::Breakpoint& b) {
  BreakpointReport s;
  s.verified = b.verified;
  s.line = b.line;
  s.message = b.message.value_or("");
  s.id = b.id;
  if (b.source && b.source->path && !b.source->path->empty()) s.path = b.source->path;
  return s;
}

// What evaluate, setVariable and setExpression answer alike.
template <class Body>
ValueInfo valueOf(const Body& b, std::string text) {
  ValueInfo out;
  out.value = std::move(text);
  out.type = b.type.value_or("");
  out.hint = hint(b.presentationHint);
  out.namedVariables = b.namedVariables;
  out.indexedVariables = b.indexedVariables;
  return out;
}

}  // namespace

json::value breakpointsArguments(const std::string& path, const std::vector<SourceBreakpointSpec>& specs) {
  json::array bps;
  for (const auto& s : specs) {
    json::object b{{"line", s.line}};
    if (s.column) b["column"] = *s.column;
    putOpt(b, "condition", s.condition);
    putOpt(b, "hitCondition", s.hitCondition);
    putOpt(b, "logMessage", s.logMessage);
    bps.push_back(std::move(b));
  }
  return json::object{{"source", json::object{{"path", path}}}, {"breakpoints", std::move(bps)}};
}

json::value functionBreakpointsArguments(const std::vector<FunctionBreakpointSpec>& specs) {
  json::array bps;
  for (const auto& s : specs) {
    json::object b{{"name", s.name}};
    putOpt(b, "condition", s.condition);
    putOpt(b, "hitCondition", s.hitCondition);
    bps.push_back(std::move(b));
  }
  return json::object{{"breakpoints", std::move(bps)}};
}

json::value exceptionBreakpointsArguments(const std::vector<ExceptionFilterSpec>& filters) {
  // Everything goes as filterOptions: the agent answers one breakpoint per entry, in order.
  json::array options;
  for (const auto& f : filters) {
    json::object o{{"filterId", f.filterId}};
    putOpt(o, "condition", f.condition);
    options.push_back(std::move(o));
  }
  return json::object{{"filters", json::array{}}, {"filterOptions", std::move(options)}};
}

Result<std::vector<BreakpointReport>> breakpointReports(const json::value& body) {
  auto b = decodeBody<protocol::BreakpointsBody>(body, "body");
  if (!b) return b.takeError();
  std::vector<BreakpointReport> out;
  for (const auto& bp : b->breakpoints) out.push_back(report(bp));
  return out;
}

Result<StopReport> stopReport(const json::value& body) {
  auto b = decodeBody<protocol::StoppedEventBody>(body, "stopped event");
  if (!b) return b.takeError();
  StopReport s;
  s.reason = b->reason;
  s.threadId = b->threadId;
  s.description = b->description.value_or("");
  s.text = b->text.value_or("");
  s.allThreadsStopped = b->allThreadsStopped.value_or(true);
  if (b->hitBreakpointIds) s.hitBreakpointIds = *b->hitBreakpointIds;
  return s;
}

Result<std::vector<ThreadInfo>> threads(const json::value& body) {
  auto b = decodeBody<protocol::ThreadsBody>(body, "body");
  if (!b) return b.takeError();
  std::vector<ThreadInfo> out;
  for (const auto& t : b->threads) out.push_back({t.id, t.name});
  return out;
}

Result<StackPage> stackPage(const json::value& body) {
  auto b = decodeBody<protocol::StackTraceBody>(body, "body");
  if (!b) return b.takeError();
  StackPage page;
  page.totalFrames = b->totalFrames;
  for (const auto& f : b->stackFrames) {
    FrameInfo fr;
    fr.id = f.id;
    fr.name = f.name;
    fr.line = f.line;
    fr.column = f.column;
    fr.presentationHint = f.presentationHint.value_or("");
    if (f.source) {
      SourceInfo si;
      si.name = f.source->name.value_or("");
      if (f.source->path && !f.source->path->empty()) si.path = f.source->path;
      si.reference = f.source->sourceReference.value_or(0);
      si.presentationHint = f.source->presentationHint.value_or("");
      fr.source = std::move(si);
    }
    page.frames.push_back(std::move(fr));
  }
  return page;
}

Result<std::vector<ScopeInfo>> scopes(const json::value& body) {
  auto b = decodeBody<protocol::ScopesBody>(body, "body");
  if (!b) return b.takeError();
  std::vector<ScopeInfo> out;
  for (const auto& s : b->scopes)
    out.push_back({s.name, s.presentationHint.value_or(""), s.variablesReference, s.namedVariables,
                   s.indexedVariables, s.expensive});
  return out;
}

Result<std::vector<ValueInfo>> variables(const json::value& body) {
  auto b = decodeBody<protocol::VariablesBody>(body, "body");
  if (!b) return b.takeError();
  std::vector<ValueInfo> out;
  for (const auto& v : b->variables) {
    ValueInfo o;
    o.name = v.name;
    o.value = v.value;
    o.type = v.type.value_or("");
    o.evaluateName = v.evaluateName.value_or("");
    o.variablesReference = v.variablesReference;
    o.namedVariables = v.namedVariables;
    o.indexedVariables = v.indexedVariables;
    o.hint = hint(v.presentationHint);
    out.push_back(std::move(o));
  }
  return out;
}

Result<ValueInfo> evaluated(const json::value& body) {
  auto b = decodeBody<protocol::EvaluateResponseBody>(body, "body");
  if (!b) return b.takeError();
  ValueInfo out = valueOf(*b, b->result);
  out.variablesReference = b->variablesReference;
  return out;
}

Result<ValueInfo> assigned(const json::value& body) {
  auto b = decodeBody<protocol::SetValueResponseBody>(body, "body");
  if (!b) return b.takeError();
  ValueInfo out = valueOf(*b, b->value);
  out.variablesReference = b->variablesReference.value_or(0);
  return out;
}

Result<std::vector<CompletionEntry>> completions(const json::value& body) {
  auto b = decodeBody<protocol::CompletionsBody>(body, "body");
  if (!b) return b.takeError();
  std::vector<CompletionEntry> out;
  for (const auto& c : b->targets)
    out.push_back({c.label, c.text.value_or(""), c.type.value_or(""), c.start, c.length});
  return out;
}

Result<ExceptionInfo> exceptionInfo(const json::value& body) {
  auto b = decodeBody<protocol::ExceptionInfoResponseBody>(body, "body");
  if (!b) return b.takeError();
  ExceptionInfo d;
  d.exceptionId = b->exceptionId;
  d.description = b->description.value_or("");
  d.breakMode = b->breakMode;
  if (b->details) {
    d.message = b->details->message.value_or("");
    d.typeName = b->details->typeName.value_or("");
    d.fullTypeName = b->details->fullTypeName.value_or("");
    d.stackTrace = b->details->stackTrace.value_or("");
  }
  return d;
}

Result<SourceContent> sourceContent(const json::value& body) {
  auto b = decodeBody<protocol::SourceResponseBody>(body, "body");
  if (!b) return b.takeError();
  return SourceContent{b->content, b->mimeType.value_or("")};
}

Result<ContinuedReport> continuedEvent(const json::value& body) {
  auto b = decodeBody<protocol::ContinuedEventBody>(body, "continued event");
  if (!b) return b.takeError();
  return ContinuedReport{b->threadId, b->allThreadsContinued.value_or(true)};
}

Result<ThreadReport> threadEvent(const json::value& body) {
  auto b = decodeBody<protocol::ThreadEventBody>(body, "thread event");
  if (!b) return b.takeError();
  return ThreadReport{b->threadId, b->reason == "started"};
}

Result<OutputReport> outputEvent(const json::value& body) {
  auto b = decodeBody<protocol::OutputEventBody>(body, "output event");
  if (!b) return b.takeError();
  const std::string c = b->category.value_or("console");
  OutputCategory category = c == "stdout"      ? OutputCategory::Stdout
                            : c == "stderr"    ? OutputCategory::Stderr
                            : c == "important" ? OutputCategory::Important
                                               : OutputCategory::Console;
  return OutputReport{category, b->output};
}

Result<BreakpointReport> breakpointEvent(const json::value& body) {
  auto b = decodeBody<protocol::BreakpointEventBody>(body, "breakpoint event");
  if (!b) return b.takeError();
  return report(b->breakpoint);
}

Result<std::int64_t> exitedEvent(const json::value& body) {
  auto b = decodeBody<protocol::ExitedEventBody>(body, "exited event");
  if (!b) return b.takeError();
  return b->exitCode;
}

Result<ProcessFacts> processFacts(const json::value& body) {
  if (!body.is_object()) return Error{errors::kMalformedMessage, "the agent's strataProcess answer is not an object", false};
  const auto& o = body.get_object();
  ProcessFacts f;
  if (auto* p = o.if_contains("pid"); p && p->is_int64()) f.pid = p->as_int64();
  if (auto* r = o.if_contains("rank"); r && r->is_int64()) f.rank = r->as_int64();
  if (auto* h = o.if_contains("host"); h && h->is_string()) f.host = std::string(h->get_string());
  return f;
}

const char* granularityName(Granularity g) {
  switch (g) {
    case Granularity::Line: return "line";
    case Granularity::Instruction: return "instruction";
    default: return "statement";
  }
}

}  // namespace strata::backends::agent
