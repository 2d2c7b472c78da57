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

}  // namespace strata::adapter
