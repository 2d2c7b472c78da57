// The shared body of next, stepIn and stepOut: they differ only in the kind of step.
#pragma once

#include "adapter/handlers/common.hpp"

namespace strata::adapter {

class StepHandler final : public TypedHandler<protocol::StepArguments> {
 public:
  StepHandler(const char* command, backends::StepKind kind) : command_(command), kind_(kind) {}
  std::string_view command() const override { return command_; }

 protected:
  void run(Session& session, const protocol::StepArguments& args, Responder respond) override {
    backends::StepOptions o;
    o.threadId = args.threadId;
    o.singleThread = args.singleThread.value_or(false);
    o.targetId = args.targetId;
    std::string g = args.granularity.value_or("statement");
    if (auto granularity = toGranularity(g)) o.granularity = *granularity;
    else
      return respond(Error{errors::kBadArguments,
                           "invalid '" + std::string(command_) + "' request: arguments.granularity: "
                           "expected 'statement', 'line' or 'instruction', got '" + g + "'", false});
    auto backend = threadBackend(session, args.threadId);
    if (!backend) return respond(backend.takeError());
    if (auto running = session.requireStopped(args.threadId, command_)) return respond(std::move(*running));
    session.threadsRan({args.threadId});
    auto before = session.runState();
    session.threadsResumed(args.threadId, !o.singleThread && !(*backend)->features().processesRunApart);
    auto self = session.shared_from_this();
    (*backend)->step(kind_, o, [self, before, respond](Result<void> r) {
      if (!r) {
        self->setRunState(before);
        return respond(r.takeError());
      }
      respond(json::value(nullptr));
    });
  }

 private:
  const char* command_;
  backends::StepKind kind_;
};

}  // namespace strata::adapter
