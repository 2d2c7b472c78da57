// parallelStacks: the stacks of every thread of several processes (the ranks of a distributed
// job, named one by one or as a launcher's descendants) merged into one tree, read-only. Any
// session can ask, before or without a launch: the processes are read from the outside, one
// at a time, on a thread of their own so that the session keeps answering meanwhile.
#include <thread>

#include "adapter/cli/stacks.hpp"
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
    std::vector<pid_t> pids;
    if (args.processIds) {
      if (args.processIds->size() > kMaxProcesses) return bad("processIds: more than " + std::to_string(kMaxProcesses));
      for (std::size_t i = 0; i < args.processIds->size(); ++i) {
        std::int64_t p = (*args.processIds)[i];
        if (p <= 0 || p > INT32_MAX) return bad("processIds[" + std::to_string(i) + "]: " + std::to_string(p) + " is not a process id");
        pids.push_back(static_cast<pid_t>(p));
      }
    }
    if (args.processTree) {
      if (*args.processTree <= 0 || *args.processTree > INT32_MAX)
        return bad("processTree: " + std::to_string(*args.processTree) + " is not a process id");
      pids.insert(pids.begin(), static_cast<pid_t>(*args.processTree));
    }
    if (pids.empty()) return bad("processIds or processTree: name the processes to read");
    bool tree = args.processTree.has_value();
    bool pythonOnly = args.pythonOnly.value_or(false);
    asio::io_context& io = session.io();
    std::thread([&io, pids = std::move(pids), tree, pythonOnly, respond = std::move(respond)]() mutable {
      auto r = cli::parallelStacks(std::move(pids), tree, pythonOnly);
      Result<json::value> body = r ? Result<json::value>(json::value(std::move(r->json))) : Result<json::value>(r.takeError());
      asio::post(io, [respond = std::move(respond), body = std::move(body)]() mutable { respond(std::move(body)); });
    }).detach();
  }
};

}  // namespace

std::unique_ptr<Handler> makeParallelStacksHandler() { return std::make_unique<ParallelStacksHandler>(); }

}  // namespace strata::adapter
