// completions: names the debug console can offer for what the user is typing; a line starting
// with '!' completes the console's commands (adapter/console.hpp) without asking the debugger.
#include "adapter/console.hpp"
#include "adapter/handlers/common.hpp"

namespace strata::adapter {
namespace {

// The text of the cursor's line up to the cursor (columns counted from `first`).
std::string typedBeforeCursor(const protocol::CompletionsArguments& args, std::int64_t first) {
  std::string_view text = args.text;
  for (std::int64_t line = args.line.value_or(1); line > 1; --line) {
    auto nl = text.find('\n');
    if (nl == std::string_view::npos) return {};
    text.remove_prefix(nl + 1);
  }
  text = text.substr(0, text.find('\n'));
  std::int64_t at = std::clamp<std::int64_t>(args.column - first, 0, static_cast<std::int64_t>(text.size()));
  return std::string(text.substr(0, static_cast<std::size_t>(at)));
}

class CompletionsHandler final : public TypedHandler<protocol::CompletionsArguments> {
 public:
  std::string_view command() const override { return "completions"; }

 protected:
  void run(Session& session, const protocol::CompletionsArguments& args, Responder respond) override {
    std::int64_t first = session.client().columnsStartAt1.value_or(true) ? 1 : 0;
    std::string typed = typedBeforeCursor(args, first);
    if (!typed.empty() && typed[0] == '!') return respond(body(toProtocol(consoleCompletions(typed, first))));
    auto backend = liveBackend(session);
    if (!backend) {
      // No program to complete names in: the console's commands are all there is.
      if (session.gpu()) return respond(body(toProtocol(consoleCompletions(typed, first))));
      return respond(backend.takeError());
    }
    backends::CompletionsQuery q;
    q.text = args.text;
    q.column = args.column;
    q.line = args.line.value_or(1);
    backends::Backend* owner = *backend;
    if (args.frameId) {
      auto frame = resolveId(session.frames(), *args.frameId, "frameId");
      if (!frame) return respond(frame.takeError());
      owner = frame->owner;
      q.frameId = frame->local;
    }
    // A debugger that completes no names (native): the console's commands were all there was.
    if (!owner->features().completions) return respond(body(protocol::CompletionsBody{}));
    owner->completions(q, [respond](Result<std::vector<backends::CompletionEntry>> r) {
      if (!r) return respond(r.takeError());
      respond(body(toProtocol(*r)));
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeCompletionsHandler() { return std::make_unique<CompletionsHandler>(); }

}  // namespace strata::adapter
