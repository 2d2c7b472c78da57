// The reply shared by setVariable and setExpression: the value as it now reads.
#pragma once

#include "adapter/handlers/common.hpp"

namespace strata::adapter {

inline backends::Reply<backends::ValueInfo> setValueReply(Session& session, backends::Backend* owner,
                                                          Responder respond) {
  auto self = session.shared_from_this();
  return [self, owner, respond](Result<backends::ValueInfo> r) {
    if (!r) return respond(r.takeError());
    respond(body(toSetValueBody(*self, owner, *r)));
  };
}

}  // namespace strata::adapter
