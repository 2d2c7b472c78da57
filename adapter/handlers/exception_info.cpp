// exceptionInfo: the exception a thread stopped on: type, message, traceback.
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

class ExceptionInfoHandler final : public TypedHandler<protocol::ExceptionInfoArguments> {
 public:
  std::string_view command() const override { return "exceptionInfo"; }

 protected:
  void run(Session& session, const protocol::ExceptionInfoArguments& args, Responder respond) override {
    auto backend = threadBackend(session, args.threadId);
    if (!backend) return respond(backend.takeError());
    if (auto running = session.requireStopped(args.threadId, "exceptionInfo")) return respond(std::move(*running));
    (*backend)->exceptionInfo(args.threadId, [respond](Result<backends::ExceptionInfo> r) {
      if (!r) return respond(r.takeError());
      respond(body(toProtocol(*r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeExceptionInfoHandler() { return std::make_unique<ExceptionInfoHandler>(); }

}  // namespace strata::adapter
