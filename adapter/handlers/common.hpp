// Helpers the debugging handlers share: finding the debuggee and resolving session ids.
#pragma once

#include "adapter/session.hpp"

namespace strata::adapter {

// The backend of a live debuggee, or the error a request gets without one.
inline Result<backends::Backend*> liveBackend(Session& session) {
  if (!session.backend() || session.debuggeeEnded())
    return Error{errors::kNoDebuggee, "there is no debuggee (launch or attach first)", false};
  return session.backend();
}

// A session id mapped back to its owner, or an error naming what was not found.
inline Result<Session::Handles::Entry> resolveId(Session::Handles& table, std::int64_t id,
                                                 const std::string& what) {
  auto e = table.find(id);
  if (!e)
    return Error{errors::kBadArguments,
                 "unknown " + what + " " + std::to_string(id) +
                     " (ids are valid only until the program runs again)",
                 false};
  return *e;
}

inline protocol::VariablePresentationHint toProtocol(const backends::ValueHint& h) {
  protocol::VariablePresentationHint p;
  if (!h.kind.empty()) p.kind = h.kind;
  if (!h.visibility.empty()) p.visibility = h.visibility;
  if (!h.attributes.empty()) p.attributes = h.attributes;
  if (h.lazy) p.lazy = true;
  return p;
}

// A child reference from a backend, made session-global (0 stays 0: no children).
inline std::int64_t globalRef(Session& session, backends::Backend* owner, std::int64_t local) {
  return local > 0 ? session.variableRefs().add(owner, local) : 0;
}

// What evaluate and setVariable/setExpression answer alike about a value, besides its text.
template <class Body>
void describeValue(Session& session, backends::Backend* owner, const backends::ValueInfo& v, Body& out) {
  if (!v.type.empty()) out.type = v.type;
  if (v.hint) out.presentationHint = toProtocol(*v.hint);
  out.variablesReference = globalRef(session, owner, v.variablesReference);
  out.namedVariables = v.namedVariables;
  out.indexedVariables = v.indexedVariables;
}

// The answer to a breakpoint request made before there is a program to place them in.
inline protocol::BreakpointsBody notYetLaunched(std::size_t count) {
  protocol::BreakpointsBody out;
  for (std::size_t i = 0; i < count; ++i) {
    protocol::Breakpoint b;
    b.message = "no program has been launched yet";
    b.reason = "pending";
    out.breakpoints.push_back(std::move(b));
  }
  return out;
}

// The same for breakpoints the session keeps until launch/attach: they carry the ids that
// `breakpoint` changed events use once they are placed.
inline protocol::BreakpointsBody notYetLaunched(const std::vector<std::int64_t>& ids) {
  protocol::BreakpointsBody out = notYetLaunched(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out.breakpoints[i].id = ids[i];
    out.breakpoints[i].message = "not placed yet: the program has not been launched";
  }
  return out;
}

// Turns a backend's breakpoint states into the response body, with session-global ids.
inline backends::Reply<std::vector<backends::BreakpointReport>> breakpointsReply(
    Session& session, backends::Backend* owner, Responder respond) {
  auto self = session.shared_from_this();
  return [self, owner, respond](Result<std::vector<backends::BreakpointReport>> r) {
    if (!r) return respond(r.takeError());
    protocol::BreakpointsBody out;
    for (const auto& s : *r) out.breakpoints.push_back(self->toProtocol(owner, s));
    respond(body(out));
  };
}

}  // namespace strata::adapter
