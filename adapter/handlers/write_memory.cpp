// writeMemory: base64 bytes written into the debuggee's memory.
#include "adapter/handlers/base64.hpp"
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class WriteMemoryHandler final : public TypedHandler<protocol::WriteMemoryArguments> {
 public:
  std::string_view command() const override { return "writeMemory"; }

 protected:
  void run(Session& session, const protocol::WriteMemoryArguments& args, Responder respond) override {
    auto backend = liveBackend(session);
    if (!backend) return respond(backend.takeError());
    auto bytes = base64Decode(args.data);
    if (!bytes)
      return respond(Error{errors::kBadArguments, "invalid 'writeMemory' request: arguments.data is not base64", false});
    (*backend)->writeMemory(args.memoryReference, args.offset.value_or(0), std::move(*bytes),
                            args.allowPartial.value_or(false), [respond](Result<std::int64_t> r) {
                              if (!r) return respond(r.takeError());
                              respond(json::value(json::object{{"bytesWritten", *r}}));
                            });
  }
};

}  // namespace

std::unique_ptr<Handler> makeWriteMemoryHandler() { return std::make_unique<WriteMemoryHandler>(); }

}  // namespace strata::adapter
