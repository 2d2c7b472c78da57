// A composite backend's answers: the ids in what one of its parts answered are that part's.
// Each item is filed under the part (its `owner`, model.hpp) unless it already names one (a
// part that is itself a composite), so the session sends what names those ids to the part.
#pragma once

#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace strata::backends {

inline void ownedBy(Backend* part, Owner& owner) {
  if (!owner) owner = part;
}
inline void ownedBy(Backend* part, FrameInfo& f) { ownedBy(part, f.owner); }
inline void ownedBy(Backend* part, ValueInfo& v) { ownedBy(part, v.owner); }
inline void ownedBy(Backend* part, BreakpointReport& b) { ownedBy(part, b.owner); }
inline void ownedBy(Backend* part, StackPage& page) {
  for (auto& f : page.frames) ownedBy(part, f);
}
template <class T>
void ownedBy(Backend* part, std::vector<T>& items) {
  for (auto& item : items) ownedBy(part, item);
}

// A part's answer passed on with its ids filed under the part.
template <class T>
Reply<T> ownedBy(Backend* part, Reply<T> reply) {
  return [part, reply = std::move(reply)](Result<T> r) {
    if (r) ownedBy(part, *r);
    reply(std::move(r));
  };
}

}  // namespace strata::backends
