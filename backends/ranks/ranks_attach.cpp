// The ranks of a job already running: attach {processIds | processTree | nodes} (ranks_backend.hpp).
#include "backends/ranks/ranks_backend.hpp"

#include <boost/json.hpp>
#include <filesystem>

#include "backends/python/attach/pid_attach_backend.hpp"
#include "backends/python/proxy/python_backend.hpp"
#include "backends/python/proxy/peer_check.hpp"
#include "backends/ranks/proc_info.hpp"

namespace strata::backends {

namespace json = boost::json;

// ---- attach: every CPython process named, or under one ---------------------------------------

void RanksBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  attaching_ = true;
  rankFilter_ = spec.rankFilter;
  stopAll_ = spec.stopAll;
  justMyCode_ = spec.justMyCode;
  std::vector<std::int64_t> pids = spec.processIds;
  std::string skipped;
  if (spec.processTree) {
    if (!std::filesystem::exists("/proc/" + std::to_string(*spec.processTree)))
      return reply(Error{errors::kBadArguments, "no process " + std::to_string(*spec.processTree), true});
    for (auto pid : procinfo::processTree(*spec.processTree)) {
      if (multiprocessingHelper(pid)) continue;
      if (PidAttachBackend::wants(pid)) pids.push_back(pid);
    }
    if (pids.empty())
      return reply(Error{errors::kBadArguments,
                         "no process under " + std::to_string(*spec.processTree) + " runs CPython (or can be read)", true});
  } else if (!spec.processIds.empty()) {
    for (auto pid : spec.processIds)
      if (!PidAttachBackend::wants(pid))
        return reply(Error{errors::kBadArguments,
                           "process " + std::to_string(pid) +
                               " does not run CPython (or cannot be read: no such process, another user); "
                               "arguments.processIds names the Python ranks of a job",
                           true});
  }
  auto left = std::make_shared<std::size_t>(pids.size() + spec.nodes.size());
  auto failures = std::make_shared<std::vector<std::string>>();
  auto done = std::make_shared<Reply<void>>(std::move(reply));
  std::weak_ptr<bool> alive = alive_;
  // Each member's answer; the attach is answered when all have, and fails only when none is in.
  auto settle = [this, alive, left, failures, done](std::size_t index, Result<void> r) {
    if (alive.expired()) return;
    Member& mm = *members_[index];
    if (!r) {
      memberGone(mm);
      failures->push_back((mm.viaAdapter ? "node " + mm.host : "process " + std::to_string(mm.pid)) + ": " +
                          r.error().message);
    } else {
      mm.ready = true;
      if (mm.viaAdapter) mm.live = true;
      if (mm.attached)
        if (auto rank = mm.attached->snapshotRank()) mm.rank = rank;
      memberReady(mm);
    }
    if (--*left) return;
    std::size_t attached = 0;
    for (auto& x : members_) attached += x->gone ? 0 : 1;
    if (attached == 0) {
      std::string why;
      for (auto& f : *failures) why += (why.empty() ? "" : "; ") + f;
      return (*done)(Error{errors::kBadProcessId, why, true});
    }
    for (auto& f : *failures) host_.output(OutputCategory::Important, "Not attached: " + f + "\n");
    (*done)({});
  };
  for (auto pid : pids) {
    Member& m = newMember(pid);
    auto backend = std::make_unique<PidAttachBackend>(io_, hostOf(m));
    m.attached = backend.get();
    setBackend(m, std::move(backend));
    std::size_t index = m.index;
    m.attached->whenAgentIn([this, alive, index] {
      if (alive.expired()) return;
      members_[index]->live = true;
      learnRank(*members_[index], [] {});
    });
    AttachSpec one;
    one.processId = pid;
    one.justMyCode = justMyCode_;
    one.subProcess = false;  // the children of a rank come to this backend
    m.backend->attach(one, [settle, index](Result<void> r) { settle(index, std::move(r)); });
  }
  // The ranks on other machines: the strata-dap --listen on each node attaches to them there,
  // and this session drives it as one member (its threads already named by rank).
  for (const auto& node : spec.nodes) {
    Member& m = newMember(0);
    m.remote = m.viaAdapter = true;
    m.host = node.host + ":" + std::to_string(node.port);
    auto py = std::make_unique<PythonBackend>(io_, hostOf(m));
    m.python = py.get();
    setBackend(m, std::move(py));
    json::object start{{"stopAll", stopAll_}};
    if (node.processTree) start["processTree"] = *node.processTree;
    else start["processIds"] = json::value_from(node.processIds);
    if (!rankFilter_.empty()) start["rankFilter"] = json::value_from(rankFilter_);
    m.python->setStartArguments(std::move(start));
    AttachSpec one;
    one.host = node.host;
    one.port = node.port;
    one.token = node.token;
    one.justMyCode = justMyCode_;
    one.subProcess = false;  // the children of a rank come to this backend
    std::size_t index = m.index;
    m.backend->attach(one, [settle, index](Result<void> r) { settle(index, std::move(r)); });
  }
}

}  // namespace strata::backends
