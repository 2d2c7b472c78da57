// readMemory: bytes of the debuggee's memory, base64; bytes past the readable part are counted
// in unreadableBytes.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ReadMemoryHandler final : public TypedHandler<protocol::ReadMemoryArguments> {
 public:
  std::string_view command() const override { return "readMemory"; }

 protected:
  void run(Session& session, const protocol::ReadMemoryArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    if (args.count < 0)
      return respond(Error{errors::kBadArguments, "invalid 'readMemory' request: arguments.count must not be negative", false});
    (*backend)->readMemory(args.memoryReference, args.offset.value_or(0), args.count,
                           [respond](Result<backends::MemoryContents> r) {
                             if (!r) return respond(r.takeError());
                             respond(toJson(*r));
                           });
  }
};

}  // namespace

std::unique_ptr<Handler> makeReadMemoryHandler() { return std::make_unique<ReadMemoryHandler>(); }

}  // namespace strata::adapter
