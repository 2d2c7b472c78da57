// The reply shared by setVariable and setExpression: the value as it now reads.
#pragma once

#include "adapter/handlers/common.hpp"

namespace strata::adapter {

inline backends::Reply<backends::ValueInfo> setValueReply(Session& session, backends::Backend* owner,
                                                          Responder respond) {
  auto self = session.shared_from_this();
  // The value was assigned even if the program ran on meanwhile: answered, without children.
  std::uint64_t since = session.resumes();
  return [self, owner, since, respond](Result<backends::ValueInfo> r) {
    if (!r) return respond(r.takeError());
    respond(body(toSetValueBody(*self, owner, *r, since)));
  };
}

}  // namespace strata::adapter
