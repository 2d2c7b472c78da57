// The reply shared by setVariable and setExpression: the value as it now reads.
#pragma once

#include "adapter/handlers/common.hpp"

namespace strata::adapter {

// `thread`: the thread of the frame or value set (0: none).
inline backends::Reply<backends::ValueInfo> setValueReply(Session& session, backends::Backend* owner,
                                                          std::int64_t thread, Responder respond) {
  auto self = session.shared_from_this();
  // The value was assigned even if the program ran on meanwhile: answered, without children.
  auto scope = session.idScope(thread);
  return [self, owner, scope, respond](Result<backends::ValueInfo> r) {
    if (!r) return respond(r.takeError());
    respond(body(toSetValueBody(*self, owner, *r, scope)));
  };
}

}  // namespace strata::adapter
