// The breakpoints a client asked for, kept and replayed (breakpoint_book.hpp).
#include "backends/breakpoint_book.hpp"

namespace strata::backends {

using Set = BreakpointSet;

Set Set::source(std::string path, std::vector<SourceBreakpointSpec> specs) {
  Set s;
  s.kind = Kind::Source;
  s.path = std::move(path);
  s.sources = std::move(specs);
  return s;
}

Set Set::function(std::vector<FunctionBreakpointSpec> specs) {
  Set s;
  s.kind = Kind::Function;
  s.functions = std::move(specs);
  return s;
}

Set Set::exception(std::vector<ExceptionFilterSpec> filters) {
  Set s;
  s.kind = Kind::Exception;
  s.filters = std::move(filters);
  return s;
}

std::size_t Set::size() const {
  switch (kind) {
    case Kind::Source: return sources.size();
    case Kind::Function: return functions.size();
    case Kind::Exception: return filters.size();
  }
  return 0;
}

std::string Set::key() const {
  switch (kind) {
    case Kind::Source: return "source:" + path;
    case Kind::Function: return "function";
    case Kind::Exception: return "exception";
  }
  return {};
}

BreakpointBook::SetPtr BreakpointBook::keep(Set set) {
  set.ids.clear();
  for (std::size_t i = 0; i < set.size(); ++i) set.ids.push_back(next_++);
  auto kept = std::make_shared<const Set>(std::move(set));
  sets_[kept->key()] = kept;
  return kept;
}

bool BreakpointBook::current(const SetPtr& set) const {
  auto it = sets_.find(set->key());
  return it != sets_.end() && it->second == set;
}

std::optional<std::pair<BreakpointBook::SetPtr, std::size_t>> BreakpointBook::where(std::int64_t id) const {
  for (const auto& [key, set] : sets_)
    for (std::size_t i = 0; i < set->ids.size(); ++i)
      if (set->ids[i] == id) return std::make_pair(set, i);
  return std::nullopt;
}

BreakpointBook::Reports BreakpointBook::held(const Set& set, const std::string& why) {
  Reports out(set.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& r = out[i];
    if (set.kind == Set::Kind::Exception) {
      r.verified = true;  // a filter has no id the client follows
      continue;
    }
    r.id = set.ids.at(i);
    r.pending = true;
    r.message = why;
    if (set.kind == Set::Kind::Source) r.line = set.sources[i].line;
  }
  return out;
}

Set Set::emptied() const {
  Set s;
  s.kind = kind;
  s.path = path;
  return s;
}

void BreakpointBook::send(Backend& to, const Set& set, Reply<Reports> reply, bool on) {
  if (on || set.kind == Set::Kind::Exception) return to.setBreakpoints(set, std::move(reply));
  to.setBreakpoints(set.emptied(), std::move(reply));
}

namespace {
// Reports of a source set name its file (a backend's answer need not).
void namePath(const Set& set, BreakpointBook::Reports& reports) {
  if (set.kind != Set::Kind::Source) return;
  for (auto& b : reports)
    if (!b.path) b.path = set.path;
}
}  // namespace

BreakpointBook::Reports BreakpointBook::orReasons(const Set& set, Result<Reports> r) {
  if (r) return std::move(*r);
  Reports out(set.size());
  for (auto& b : out) b.message = r.error().message;
  namePath(set, out);
  return out;
}

void BreakpointBook::learn(const Backend* from, const Set& set, const Reports& reports) {
  for (std::size_t i = 0; i < reports.size() && i < set.ids.size(); ++i)
    if (reports[i].id) theirs_[{from, *reports[i].id}] = set.ids[i];
}

void BreakpointBook::place(Backend& to, const SetPtr& set, Reply<Reports> done, bool on) {
  std::weak_ptr<bool> alive = alive_;
  const Backend* from = &to;
  send(to, *set, [this, alive, from, set, done = std::move(done)](Result<Reports> r) {
    if (r) namePath(*set, *r);
    if (!alive.expired() && r && current(set)) learn(from, *set, *r);
    done(std::move(r));
  }, on);
}

void BreakpointBook::replay(Backend& to, std::function<void(const SetPtr&, Result<Reports>)> each,
                            std::function<void()> all, bool on) {
  auto left = std::make_shared<std::size_t>(sets_.size() + 1);
  auto one = [left, all] {
    if (--*left == 0 && all) all();
  };
  // A copy: an answer may come at once and its handler change the book.
  auto sets = sets_;
  for (const auto& entry : sets) {
    const SetPtr& set = entry.second;
    place(to, set, [set, each, one](Result<Reports> r) {
      each(set, std::move(r));
      one();
    }, on);
  }
  one();
}

std::optional<std::int64_t> BreakpointBook::ours(const Backend* from, std::int64_t theirs) const {
  auto it = theirs_.find({from, theirs});
  if (it == theirs_.end()) return std::nullopt;
  return it->second;
}

void BreakpointBook::moved(const Backend* from, std::int64_t was, std::int64_t now) {
  if (auto it = theirs_.find({from, was}); it != theirs_.end()) theirs_[{from, now}] = it->second;
}

void BreakpointBook::forget(const Backend* from) {
  for (auto it = theirs_.begin(); it != theirs_.end();)
    it = it->first.first == from ? theirs_.erase(it) : std::next(it);
}

void BreakpointBook::mapPaths(const std::function<std::string(const std::string&)>& map) {
  std::map<std::string, SetPtr> mapped;
  for (const auto& [key, set] : sets_) {
    if (set->kind != Set::Kind::Source) {
      mapped.emplace(key, set);
      continue;
    }
    auto copy = std::make_shared<Set>(*set);
    copy->path = map(set->path);
    mapped[copy->key()] = copy;
  }
  sets_ = std::move(mapped);
}

}  // namespace strata::backends
