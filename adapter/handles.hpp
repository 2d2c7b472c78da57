// Session-global ids for things each backend numbers on its own (frames, variables, sources,
// breakpoints), mapped back to the owning backend and its local id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace strata::adapter {

template <class Owner>
class HandleTable {
 public:
  struct Entry {
    Owner* owner = nullptr;
    std::int64_t local = 0;
    std::int64_t thread = 0;  // the thread whose stop it belongs to; 0: none in particular
  };

  // The same (owner, local) pair keeps its id until clear() or its thread is forgotten.
  std::int64_t add(Owner* owner, std::int64_t local, std::int64_t thread = 0) {
    auto key = std::make_pair(owner, local);
    if (auto it = byLocal_.find(key); it != byLocal_.end()) return it->second;
    std::int64_t id = next_++;
    byLocal_.emplace(key, id);
    byId_.emplace(id, Entry{owner, local, thread});
    return id;
  }
  // Makes an id handed out earlier (owner-less, before there was a backend) name (owner, local).
  void rebind(std::int64_t id, Owner* owner, std::int64_t local) {
    if (auto it = byId_.find(id); it != byId_.end()) byLocal_.erase({it->second.owner, it->second.local});
    byId_[id] = Entry{owner, local, 0};
    byLocal_[{owner, local}] = id;
  }
  // The id (owner, local) has, if it has one.
  std::optional<std::int64_t> idOf(Owner* owner, std::int64_t local) const {
    auto it = byLocal_.find({owner, local});
    if (it == byLocal_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<Entry> find(std::int64_t id) const {
    auto it = byId_.find(id);
    if (it == byId_.end()) return std::nullopt;
    return it->second;
  }
  // Ids keep counting up afterwards, so a stale id from before never names a new thing.
  void clear() {
    byId_.clear();
    byLocal_.clear();
  }
  void forget(Owner* owner) {
    forgetIf([owner](const Entry& e) { return e.owner == owner; });
  }
  // The ids of these threads' stops, and those of no thread in particular.
  void forgetThreads(const std::set<std::int64_t>& threads) {
    forgetIf([&threads](const Entry& e) { return e.thread == 0 || threads.count(e.thread) > 0; });
  }

 private:
  template <class Pred>
  void forgetIf(Pred gone) {
    for (auto it = byId_.begin(); it != byId_.end();) {
      if (gone(it->second)) {
        byLocal_.erase({it->second.owner, it->second.local});
        it = byId_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::int64_t next_ = 1;
  std::map<std::int64_t, Entry> byId_;
  std::map<std::pair<Owner*, std::int64_t>, std::int64_t> byLocal_;
};

}  // namespace strata::adapter
