// Agent JSON <-> neutral types; missing or mistyped fields read as empty, never throw.
#include "backends/python/proxy/translate.hpp"

namespace strata::backends::agent {
namespace {

const json::object& obj(const json::value& v) {
  static const json::object empty;
  return v.is_object() ? v.get_object() : empty;
}
std::string str(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}
std::optional<std::int64_t> optInt(const json::object& o, const char* key) {
  auto* v = o.if_contains(key);
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  if (v && v->is_double()) return static_cast<std::int64_t>(v->get_double());
  return std::nullopt;
}
std::int64_t num(const json::object& o, const char* key) { return optInt(o, key).value_or(0); }
bool flag(const json::object& o, const char* key, bool fallback = false) {
  auto* v = o.if_contains(key);
  return v && v->is_bool() ? v->get_bool() : fallback;
}
const json::array& arr(const json::object& o, const char* key) {
  static const json::array empty;
  auto* v = o.if_contains(key);
  return v && v->is_array() ? v->get_array() : empty;
}
void putOpt(json::object& o, const char* key, const std::optional<std::string>& v) {
  if (v) o[key] = *v;
}

std::optional<ValueHint> hint(const json::object& o) {
  auto* h = o.if_contains("presentationHint");
  if (!h || !h->is_object()) return std::nullopt;
  const auto& ho = h->get_object();
  ValueHint out;
  out.kind = str(ho, "kind");
  out.visibility = str(ho, "visibility");
  out.lazy = flag(ho, "lazy");
  for (const auto& a : arr(ho, "attributes"))
    if (a.is_string()) out.attributes.emplace_back(a.get_string());
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

BreakpointReport breakpointReport(const json::value& v) {
  const auto& o = obj(v);
  BreakpointReport s;
  s.verified = flag(o, "verified");
  s.line = optInt(o, "line");
  s.message = str(o, "message");
  s.id = optInt(o, "id");
  if (auto* src = o.if_contains("source"); src && src->is_object()) {
    std::string p = str(src->get_object(), "path");
    if (!p.empty()) s.path = p;
  }
  return s;
}

std::vector<BreakpointReport> breakpointReports(const json::value& body) {
  std::vector<BreakpointReport> out;
  for (const auto& b : arr(obj(body), "breakpoints")) out.push_back(breakpointReport(b));
  return out;
}

StopReport stopReport(const json::value& body) {
  const auto& o = obj(body);
  StopReport s;
  s.reason = str(o, "reason");
  s.threadId = optInt(o, "threadId");
  s.description = str(o, "description");
  s.text = str(o, "text");
  s.allThreadsStopped = flag(o, "allThreadsStopped", true);
  for (const auto& id : arr(o, "hitBreakpointIds"))
    if (id.is_int64()) s.hitBreakpointIds.push_back(id.get_int64());
  return s;
}

std::vector<ThreadInfo> threads(const json::value& body) {
  std::vector<ThreadInfo> out;
  for (const auto& t : arr(obj(body), "threads")) out.push_back({num(obj(t), "id"), str(obj(t), "name")});
  return out;
}

StackPage stackPage(const json::value& body) {
  const auto& o = obj(body);
  StackPage page;
  page.totalFrames = optInt(o, "totalFrames");
  for (const auto& fv : arr(o, "stackFrames")) {
    const auto& f = obj(fv);
    FrameInfo fr;
    fr.id = num(f, "id");
    fr.name = str(f, "name");
    fr.line = num(f, "line");
    fr.column = num(f, "column");
    fr.presentationHint = str(f, "presentationHint");
    if (auto* src = f.if_contains("source"); src && src->is_object()) {
      const auto& so = src->get_object();
      SourceInfo si;
      si.name = str(so, "name");
      std::string p = str(so, "path");
      if (!p.empty()) si.path = p;
      si.reference = num(so, "sourceReference");
      si.presentationHint = str(so, "presentationHint");
      fr.source = std::move(si);
    }
    page.frames.push_back(std::move(fr));
  }
  return page;
}

std::vector<ScopeInfo> scopes(const json::value& body) {
  std::vector<ScopeInfo> out;
  for (const auto& sv : arr(obj(body), "scopes")) {
    const auto& s = obj(sv);
    out.push_back({str(s, "name"), str(s, "presentationHint"), num(s, "variablesReference"),
                   optInt(s, "namedVariables"), optInt(s, "indexedVariables"), flag(s, "expensive")});
  }
  return out;
}

ValueInfo value(const json::value& v, const char* valueKey) {
  const auto& o = obj(v);
  ValueInfo out;
  out.name = str(o, "name");
  out.value = str(o, valueKey);
  out.type = str(o, "type");
  out.evaluateName = str(o, "evaluateName");
  out.variablesReference = num(o, "variablesReference");
  out.namedVariables = optInt(o, "namedVariables");
  out.indexedVariables = optInt(o, "indexedVariables");
  out.hint = hint(o);
  return out;
}

std::vector<ValueInfo> variables(const json::value& body) {
  std::vector<ValueInfo> out;
  for (const auto& v : arr(obj(body), "variables")) out.push_back(value(v, "value"));
  return out;
}

std::vector<CompletionEntry> completions(const json::value& body) {
  std::vector<CompletionEntry> out;
  for (const auto& cv : arr(obj(body), "targets")) {
    const auto& c = obj(cv);
    out.push_back({str(c, "label"), str(c, "text"), str(c, "type"), optInt(c, "start"), optInt(c, "length")});
  }
  return out;
}

ExceptionInfo exceptionInfo(const json::value& body) {
  const auto& o = obj(body);
  ExceptionInfo d;
  d.exceptionId = str(o, "exceptionId");
  d.description = str(o, "description");
  d.breakMode = str(o, "breakMode");
  if (auto* det = o.if_contains("details"); det && det->is_object()) {
    const auto& x = det->get_object();
    d.message = str(x, "message");
    d.typeName = str(x, "typeName");
    d.fullTypeName = str(x, "fullTypeName");
    d.stackTrace = str(x, "stackTrace");
  }
  return d;
}

SourceContent sourceContent(const json::value& body) {
  const auto& o = obj(body);
  return {str(o, "content"), str(o, "mimeType")};
}

const char* granularityName(Granularity g) {
  switch (g) {
    case Granularity::Line: return "line";
    case Granularity::Instruction: return "instruction";
    default: return "statement";
  }
}

}  // namespace strata::backends::agent
