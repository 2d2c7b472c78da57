// threads: the debuggee's threads (none before launch or after exit).
#include "adapter/convert.hpp"

namespace strata::adapter {
namespace {

class ThreadsHandler final : public Handler {
 public:
  std::string_view command() const override { return "threads"; }
  void handle(Session& session, const protocol::Request&, Responder respond) override {
    if (!session.backend() || session.debuggeeEnded())
      return respond(body(protocol::ThreadsBody{}));
    session.backend()->threads([respond](Result<std::vector<backends::ThreadInfo>> r) {
      if (!r) return respond(r.takeError());
      respond(body(toProtocol(*r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeThreadsHandler() { return std::make_unique<ThreadsHandler>(); }

}  // namespace strata::adapter
