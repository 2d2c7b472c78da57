// The breakpoints a client asked for, as it last asked: one set per setBreakpoints source,
// one for setFunctionBreakpoints, one for setExceptionBreakpoints, each entry with the id the
// client was given. The session keeps the sets sent before there is a backend; attach by pid
// those sent before its agent is in; mixed mode the native ones sent before its native
// debugger is in; the ranks backend every set, for each rank as it comes. Each replays its
// sets into the backend when it is ready, and maps the ids that backend gives back to its own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace strata::backends {

class BreakpointBook {
 public:
  using Set = BreakpointSet;
  using SetPtr = std::shared_ptr<const Set>;
  using Reports = std::vector<BreakpointReport>;

  explicit BreakpointBook(std::int64_t firstId = 1) : next_(firstId) {}

  // Keeps the set in place of the last one of its kind (and path), its entries with new ids.
  SetPtr keep(Set set);
  // Whether the set is still the last one the client sent of its kind (a reply for a replaced
  // one is stale).
  bool current(const SetPtr& set) const;
  const std::map<std::string, SetPtr>& sets() const { return sets_; }
  // The set and the entry that hold one of the book's ids.
  std::optional<std::pair<SetPtr, std::size_t>> where(std::int64_t id) const;

  // The reports a kept set answers with while no backend has it: each entry pending with its
  // id and why (an exception filter, with no id, is on as soon as there is a backend: verified).
  static Reports held(const Set& set, const std::string& why);
  // Sends a set to a backend; `on` false sends it empty (a rank the breakpoints are filtered out
  // of; exception filters are always sent).
  static void send(Backend& to, const Set& set, Reply<Reports> reply, bool on = true);

  // Sends a set and, while it is still the current one, learns the ids `to` gives its entries
  // (ours() maps them back). `done` gets the answer with the ids still `to`'s, each report of a
  // source set naming its file.
  void place(Backend& to, const SetPtr& set, Reply<Reports> done, bool on = true);
  // Every kept set, into a backend that has just become ready; `each` and `on` as for place,
  // `all` once every set has answered.
  void replay(Backend& to, std::function<void(const SetPtr&, Result<Reports>)> each, std::function<void()> all = {},
              bool on = true);
  // One report per entry: the answer, or its refusal as the reason on each (naming the file of
  // a source set).
  static Reports orReasons(const Set& set, Result<Reports> r);
  // The book's id for an id `from` gave one of its entries, if it is one.
  std::optional<std::int64_t> ours(const Backend* from, std::int64_t theirs) const;
  // `from` gave one of its entries a new id (a breakpoint it kept is placed now).
  void moved(const Backend* from, std::int64_t was, std::int64_t now);
  void forget(const Backend* from);
  // Drops every set (replayed into the backend that has them now); ids keep counting up.
  void clear() { sets_.clear(); }
  // Every source set's path through `map` (the session's sourceMap, known only at launch), ids kept.
  void mapPaths(const std::function<std::string(const std::string&)>& map);

 private:
  void learn(const Backend* from, const Set& set, const Reports& reports);

  std::int64_t next_;
  std::map<std::string, SetPtr> sets_;
  std::map<std::pair<const Backend*, std::int64_t>, std::int64_t> theirs_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
