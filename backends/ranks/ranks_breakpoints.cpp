// The ranks of a job: one set of breakpoints for every member, each placement merged for the client (ranks_backend.hpp).
#include "backends/ranks/ranks_backend.hpp"


namespace strata::backends {

namespace {
bool sameReport(const BreakpointReport& a, const BreakpointReport& b) {
  return a.verified == b.verified && a.line == b.line && a.message == b.message && a.pending == b.pending;
}
}  // namespace

// ---- breakpoints: one set for every member ----------------------------------------------------

BreakpointReport RanksBackend::merged(const BpSet& set, std::size_t i) const {
  BreakpointReport out;
  out.id = set.ids[i];
  if (set.kind == BpSet::Kind::Source) out.path = set.path;
  const BreakpointReport* first = nullptr;
  for (const auto& [member, r] : set.placed[i]) {
    if (!first) first = &r;
    if (r.verified) {
      out.verified = true;
      out.line = r.line;
      return out;
    }
  }
  if (first) {
    out.message = first->message;
    out.line = first->line;
    out.pending = first->pending;
  } else {
    out.pending = true;
    out.message = rankFilter_.empty() ? "no process of the job has started yet: set in each one as it starts"
                                      : "no process of the job that rankFilter names has started yet";
  }
  return out;
}

void RanksBackend::tellChanges(BpSet& set) {
  for (std::size_t i = 0; i < set.size() && i < set.told.size(); ++i) {
    BreakpointReport now = merged(set, i);
    if (sameReport(now, set.told[i])) continue;
    set.told[i] = now;
    if (set.kind != BpSet::Kind::Exception) host_.breakpointChanged(now);
  }
}

std::vector<BreakpointReport> RanksBackend::fromMember(Member& m, BpSet& set, std::vector<BreakpointReport> reports) {
  for (std::size_t i = 0; i < reports.size() && i < set.size(); ++i) {
    if (reports[i].id) m.bpFromChild[*reports[i].id] = set.ids[i];
    set.placed[i][m.index] = reports[i];
  }
  return reports;
}

void RanksBackend::applySet(Member& m, const std::string& key, std::function<void()> done) {
  auto it = sets_.find(key);
  if (it == sets_.end() || m.gone) return done();
  auto set = it->second;
  std::size_t index = m.index;
  std::uint64_t generation = set->generation;
  std::weak_ptr<bool> alive = alive_;
  auto onReply = [this, alive, index, set, generation, done](Result<std::vector<BreakpointReport>> r) {
    if (alive.expired()) return;
    if (r && set->generation == generation) fromMember(*members_[index], *set, std::move(*r));
    done();
  };
  bool on = m.breakpointsOn || set->kind == BpSet::Kind::Exception;
  switch (set->kind) {
    case BpSet::Kind::Source:
      return m.backend->setSourceBreakpoints(set->path, on ? set->sources : std::vector<SourceBreakpointSpec>{}, onReply);
    case BpSet::Kind::Function:
      return m.backend->setFunctionBreakpoints(on ? set->functions : std::vector<FunctionBreakpointSpec>{}, onReply);
    case BpSet::Kind::Exception:
      return m.backend->setExceptionBreakpoints(set->filters, onReply);
  }
}

// A member that just came: every set the client has, then what changed for the client.
void RanksBackend::applyAll(Member& m, std::function<void()> done) {
  auto left = std::make_shared<std::size_t>(sets_.size() + 1);
  std::weak_ptr<bool> alive = alive_;
  auto one = [this, alive, left, done] {
    if (--*left || alive.expired()) return;
    for (auto& [key, set] : sets_) tellChanges(*set);
    done();
  };
  std::vector<std::string> keys;
  for (auto& [key, set] : sets_) keys.push_back(key);
  for (auto& key : keys) applySet(m, key, one);
  one();
}

void RanksBackend::sendSet(const std::string& key, std::shared_ptr<BpSet> set, Reply<std::vector<BreakpointReport>> reply) {
  if (auto old = sets_.find(key); old != sets_.end()) {
    for (auto id : old->second->ids) bpWhere_.erase(id);
    set->generation = old->second->generation + 1;
  }
  set->ids.clear();
  for (std::size_t i = 0; i < set->size(); ++i) {
    set->ids.push_back(nextBp_++);
    bpWhere_[set->ids.back()] = {key, i};
  }
  set->placed.assign(set->size(), {});
  sets_[key] = set;
  std::vector<std::size_t> targets;
  for (auto& m : members_)
    if (m->ready && !m->gone) targets.push_back(m->index);
  auto left = std::make_shared<std::size_t>(targets.size() + 1);
  std::weak_ptr<bool> alive = alive_;
  auto one = [this, alive, left, set, reply] {
    if (--*left || alive.expired()) return;
    std::vector<BreakpointReport> out;
    for (std::size_t i = 0; i < set->size(); ++i) out.push_back(merged(*set, i));
    set->told = out;
    if (set->kind == BpSet::Kind::Exception)
      for (auto& r : out) r.id.reset(), r.path.reset();
    reply(std::move(out));
  };
  for (auto index : targets) applySet(*members_[index], key, one);
  one();
}

void RanksBackend::setSourceBreakpoints(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                                        Reply<std::vector<BreakpointReport>> reply) {
  auto set = std::make_shared<BpSet>();
  set->kind = BpSet::Kind::Source;
  set->path = path;
  set->sources = breakpoints;
  sendSet("source:" + path, set, std::move(reply));
}

void RanksBackend::setFunctionBreakpoints(const std::vector<FunctionBreakpointSpec>& breakpoints,
                                          Reply<std::vector<BreakpointReport>> reply) {
  auto set = std::make_shared<BpSet>();
  set->kind = BpSet::Kind::Function;
  set->functions = breakpoints;
  sendSet("function", set, std::move(reply));
}

void RanksBackend::setExceptionBreakpoints(const std::vector<ExceptionFilterSpec>& filters,
                                           Reply<std::vector<BreakpointReport>> reply) {
  auto set = std::make_shared<BpSet>();
  set->kind = BpSet::Kind::Exception;
  set->filters = filters;
  sendSet("exception", set, std::move(reply));
}

void RanksBackend::onBreakpoint(Member& m, const BreakpointReport& report) {
  if (!report.id) return;
  auto child = m.bpFromChild.find(*report.id);
  if (child == m.bpFromChild.end()) return;
  auto where = bpWhere_.find(child->second);
  if (where == bpWhere_.end()) return;
  auto set = sets_[where->second.first];
  set->placed[where->second.second][m.index] = report;
  tellChanges(*set);
}

}  // namespace strata::backends
