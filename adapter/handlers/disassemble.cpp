// disassemble: instructions around a memory reference, with symbols and source lines.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class DisassembleHandler final : public TypedHandler<protocol::DisassembleArguments> {
 public:
  std::string_view command() const override { return "disassemble"; }

 protected:
  void run(Session& session, const protocol::DisassembleArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    if (args.instructionCount < 0)
      return respond(Error{errors::kBadArguments,
                           "invalid 'disassemble' request: arguments.instructionCount must not be negative", false});
    backends::DisassembleQuery q;
    q.memoryReference = args.memoryReference;
    q.offset = args.offset.value_or(0);
    q.instructionOffset = args.instructionOffset.value_or(0);
    q.instructionCount = args.instructionCount;
    q.resolveSymbols = args.resolveSymbols.value_or(false);
    auto self = session.shared_from_this();
    backends::Backend* owner = *backend;
    owner->disassemble(q, [self, owner, respond](Result<std::vector<backends::InstructionInfo>> r) {
      if (!r) return respond(r.takeError());
      respond(toJson(*self, owner, *r));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeDisassembleHandler() { return std::make_unique<DisassembleHandler>(); }

}  // namespace strata::adapter
