// launch: resolves the configuration, picks a backend and starts the program.
#include <unistd.h>

#include <filesystem>

#include "adapter/launch_config.hpp"
#include "adapter/session.hpp"

extern char** environ;

namespace strata::adapter {
namespace {

std::vector<std::string> adapterEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

class LaunchHandler final : public TypedHandler<protocol::LaunchRequestArguments> {
 public:
  std::string_view command() const override { return "launch"; }
  // A launch waits on the client's terminal, or on the Python program to connect; the user may
  // give up on either, and then what was started goes.
  bool cancellable() const override { return true; }
  void cancelled(Session& session) const override {
    if (auto* backend = session.backend()) backend->abandonStart();
  }

 protected:
  void run(Session& session, const protocol::LaunchRequestArguments& args, Responder respond) override {
    if (session.backend())
      return respond(Error{errors::kWrongState, "this session already has a debuggee", true});
    std::error_code ec;
    auto spec = resolveLaunch(args, adapterEnvironment(), std::filesystem::current_path(ec).string());
    if (!spec) {
      Error e = spec.takeError();
      e.message = "cannot launch: " + e.message;
      return respond(std::move(e));
    }
    auto backend = session.createBackend(*spec);
    auto* raw = backend.get();
    session.setBackend(std::move(backend), true);
    auto self = session.shared_from_this();
    raw->launch(*spec, [self, respond](Result<void> r) {
      if (!r) {
        Error e = r.takeError();
        e.id = errors::kLaunchFailed;
        e.message = "cannot launch: " + e.message;
        return respond(std::move(e));
      }
      respond(json::value(nullptr));
      self->backendStarted();
    });
    // Breakpoints the client set before this request go to the program now.
    session.applyEarlyBreakpoints();
  }
};

}  // namespace

std::unique_ptr<Handler> makeLaunchHandler() { return std::make_unique<LaunchHandler>(); }

}  // namespace strata::adapter
