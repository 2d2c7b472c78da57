// parallelStacks: the stacks of every thread of several processes (the ranks of a distributed
// job, named one by one or as a launcher's descendants, by default the session's own) merged
// into one tree, read-only. Any
// session can ask, before or without a launch: the processes are read from the outside, one
// at a time, on the session's worker so that the session keeps answering meanwhile. The
// reading is the backend factory's (strata-dap's: backends/stacks, as `strata stacks --tree`).
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

constexpr std::size_t kMaxProcesses = 4096;

class ParallelStacksHandler final : public TypedHandler<protocol::ParallelStacksArguments> {
 public:
  std::string_view command() const override { return "parallelStacks"; }

 protected:
  void run(Session& session, const protocol::ParallelStacksArguments& args, Responder respond) override {
    auto bad = [&](const std::string& why) {
      respond(Error{errors::kBadArguments, "invalid 'parallelStacks' request: arguments." + why, false});
    };
    auto reader = session.backendFactory().parallelStacks;
    if (!reader)
      return respond(Error{errors::kUnsupportedRequest, "'parallelStacks': this build of the adapter reads no process stacks", false});
    std::vector<int> pids;
    if (args.processIds) {
      if (args.processIds->size() > kMaxProcesses) return bad("processIds: more than " + std::to_string(kMaxProcesses));
      for (std::size_t i = 0; i < args.processIds->size(); ++i) {
        std::int64_t p = (*args.processIds)[i];
        if (p <= 0 || p > INT32_MAX) return bad("processIds[" + std::to_string(i) + "]: " + std::to_string(p) + " is not a process id");
        pids.push_back(static_cast<int>(p));
      }
    }
    if (args.processTree) {
      if (*args.processTree <= 0 || *args.processTree > INT32_MAX)
        return bad("processTree: " + std::to_string(*args.processTree) + " is not a process id");
      pids.insert(pids.begin(), static_cast<int>(*args.processTree));
    }
    bool tree = args.processTree.has_value();
    // Without either: the session's own program and its descendants (a job's ranks under their
    // launcher).
    if (pids.empty() && session.processId() > 0 && session.processId() <= INT32_MAX) {
      pids.push_back(static_cast<int>(session.processId()));
      tree = true;
    }
    if (pids.empty()) return bad("processIds or processTree: name the processes to read (this session debugs none)");
    bool pythonOnly = args.pythonOnly.value_or(false);
    session.offload(
        [reader, pids = std::move(pids), tree, pythonOnly](const std::function<bool()>& cancelled) mutable {
          return reader(std::move(pids), tree, pythonOnly, cancelled);
        },
        std::move(respond));
  }
};

}  // namespace

std::unique_ptr<Handler> makeParallelStacksHandler() { return std::make_unique<ParallelStacksHandler>(); }

}  // namespace strata::adapter
