// The ranks of a job: threads named by rank, and the requests that inspect a stop, routed to the member that owns the thread or id (ranks_backend.hpp).
#include "backends/ranks/ranks_backend.hpp"

#include "backends/owned.hpp"

#include <algorithm>

namespace strata::backends {

// ---- threads and inspection -------------------------------------------------------------------

void RanksBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  struct Gather {
    std::map<std::size_t, std::vector<ThreadInfo>> by;
    std::size_t left = 1;
  };
  auto g = std::make_shared<Gather>();
  std::weak_ptr<bool> alive = alive_;
  auto finish = [this, alive, g, reply] {
    if (--g->left || alive.expired()) return;
    std::vector<std::size_t> order;
    for (auto& [index, ts] : g->by) order.push_back(index);
    std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
      const auto& x = *members_[a];
      const auto& y = *members_[b];
      if (x.rank.has_value() != y.rank.has_value()) return y.rank.has_value();  // the launcher first
      if (x.rank && y.rank && *x.rank != *y.rank) return *x.rank < *y.rank;
      return x.pid < y.pid;
    });
    std::vector<ThreadInfo> out;
    for (auto index : order)
      for (auto t : g->by[index]) {
        if (!members_[index]->viaAdapter) t.name = label(*members_[index]) + " / " + t.name;
        out.push_back(std::move(t));
      }
    reply(std::move(out));
  };
  for (auto& m : members_) {
    if (m->gone || !m->ready) continue;
    ++g->left;
    std::size_t index = m->index;
    auto gather = [this, alive, g, index, finish](Result<std::vector<ThreadInfo>> r) {
      if (alive.expired()) return;
      if (r) {
        Member& mm = *members_[index];
        for (auto& t : *r) {
          if (!mm.remote) threadOwner_[t.id] = index;
          mm.threads.insert(t.id);
          t.id = sessionTid(mm, t.id);
        }
        g->by[index] = std::move(*r);
      }
      finish();
    };
    // A rank's rank may be set by the program itself after it started (a spawned rank).
    if (!m->rank && m->live)
      learnRank(*m, [this, alive, index, gather] {
        if (!alive.expired()) members_[index]->backend->threads(gather);
      });
    else
      m->backend->threads(gather);
  }
  finish();
}

void RanksBackend::stackTrace(std::int64_t sessionThread, std::int64_t startFrame, std::int64_t levels,
                              Reply<StackPage> reply) {
  std::int64_t threadId = 0;
  Member* m = memberOf(sessionThread, &threadId);
  if (!m) return reply(Error{errors::kBadArguments, "thread " + std::to_string(sessionThread) + " belongs to no process of this job", false});
  m->backend->stackTrace(threadId, startFrame, levels, ownedBy(m->backend.get(), std::move(reply)));
}

// A request that names no frame: to the last member that stopped, its values filed under it.
RanksBackend::Member* RanksBackend::lastStoppedMember() {
  if (!lastStopped_ || members_[*lastStopped_]->gone) return nullptr;
  return members_[*lastStopped_].get();
}

void RanksBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  Member* m = lastStoppedMember();
  if (!m) return reply(Error{errors::kBadArguments, "evaluate needs a frame: no process of the job has stopped", false});
  m->backend->evaluate(query, ownedBy(m->backend.get(), std::move(reply)));
}

void RanksBackend::setExpression(const std::string& expression, const std::string& value,
                                 std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
  Member* m = lastStoppedMember();
  if (!m) return reply(Error{errors::kBadArguments, "setExpression needs a frame of a stopped process", false});
  m->backend->setExpression(expression, value, frameId, ownedBy(m->backend.get(), std::move(reply)));
}

void RanksBackend::completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) {
  Member* m = lastStoppedMember();
  if (!m) return reply(std::vector<CompletionEntry>{});
  m->backend->completions(query, std::move(reply));
}

void RanksBackend::exceptionInfo(std::int64_t sessionThread, Reply<ExceptionInfo> reply) {
  std::int64_t threadId = 0;
  Member* m = memberOf(sessionThread, &threadId);
  if (!m) return reply(Error{errors::kBadArguments, "thread " + std::to_string(sessionThread) + " belongs to no process of this job", false});
  m->backend->exceptionInfo(threadId, std::move(reply));
}

}  // namespace strata::backends
