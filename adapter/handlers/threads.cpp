// threads: the threads of every backend the session holds (none before launch or after exit),
// each remembered as its backend's so requests naming it go there.
#include "adapter/convert.hpp"

namespace strata::adapter {
namespace {

class ThreadsHandler final : public Handler {
 public:
  std::string_view command() const override { return "threads"; }
  void handle(Session& session, const protocol::Request&, Responder respond) override {
    std::vector<backends::Backend*> asked;
    for (auto* b : session.allBackends())
      if (b != session.backend() || !session.debuggeeEnded()) asked.push_back(b);
    if (asked.empty()) return respond(body(protocol::ThreadsBody{}));
    // One answer from each, in the order asked; the first error is the answer.
    struct Gather {
      std::vector<std::optional<Result<std::vector<backends::ThreadInfo>>>> replies;
      std::size_t pending = 0;
    };
    auto gather = std::make_shared<Gather>();
    gather->replies.resize(asked.size());
    gather->pending = asked.size();
    auto self = session.shared_from_this();
    for (std::size_t i = 0; i < asked.size(); ++i) {
      auto* owner = asked[i];
      owner->threads([self, gather, i, owner, respond](Result<std::vector<backends::ThreadInfo>> r) {
        if (gather->replies[i]) return;  // a backend that answers twice
        if (r) self->noteThreads(owner, *r);
        gather->replies[i] = std::move(r);
        if (--gather->pending) return;
        std::vector<backends::ThreadInfo> all;
        for (auto& reply : gather->replies) {
          if (!*reply) return respond(reply->takeError());
          all.insert(all.end(), (*reply)->begin(), (*reply)->end());
        }
        respond(body(toProtocol(all)));
      });
    }
  }
};

}  // namespace

std::unique_ptr<Handler> makeThreadsHandler() { return std::make_unique<ThreadsHandler>(); }

}  // namespace strata::adapter
