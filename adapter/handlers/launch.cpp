// launch: resolves the configuration, picks a backend and starts the program; or, with
// "trace", opens a recorded GPU trace in the GPU backend with no program.
#include <unistd.h>

#include <filesystem>

#include "adapter/handlers/common.hpp"
#include "adapter/launch_config.hpp"

extern char** environ;

namespace strata::adapter {
namespace {

std::vector<std::string> adapterEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

std::string adapterCwd() {
  std::error_code ec;
  return std::filesystem::current_path(ec).string();
}

class LaunchHandler final : public TypedHandler<protocol::LaunchRequestArguments> {
 public:
  std::string_view command() const override { return "launch"; }
  // A launch waits on the client's terminal, on the Python program to connect, or on a trace's
  // import; the user may give up on any, and then what was started goes.
  bool cancellable() const override { return true; }
  void cancelled(Session& session) const override {
    if (auto* backend = session.backend()) backend->abandonStart();
    else if (auto* gpu = session.gpu()) gpu->abandonOpen();
  }

 protected:
  void run(Session& session, const protocol::LaunchRequestArguments& args, Responder respond) override {
    if (auto busy = cannotStart(session)) return respond(std::move(*busy));
    if (args.trace) return openTrace(session, args, std::move(respond));
    auto spec = resolveLaunch(args, adapterEnvironment(), adapterCwd());
    if (!spec) {
      Error e = spec.takeError();
      e.message = "cannot launch: " + e.message;
      return respond(std::move(e));
    }
    auto map = SourceMap::parse(args.sourceMap, "arguments.sourceMap");
    if (!map) {
      Error e = map.takeError();
      e.message = "cannot launch: " + e.message;
      return respond(std::move(e));
    }
    session.setSourceMap(std::move(*map));
    bool collecting = false;
    if (auto* gpu = session.gpu()) {
      auto store = resolveGpuStore(args, adapterCwd());
      if (!store) {
        Error e = store.takeError();
        e.message = "cannot launch: " + e.message;
        return respond(std::move(e));
      }
      if (!store->empty()) gpu->setStorePath(*store);
      if (args.gpu) {
        // GPU collection in the program: the collector goes into its environment.
        auto prepared = gpu->prepareLaunch(*spec, *args.gpu);
        if (!prepared) {
          Error e = prepared.takeError();
          e.message = "cannot launch: " + e.message;
          return respond(std::move(e));
        }
        collecting = true;
      }
    } else if (args.gpu) {
      return respond(Error{errors::kNoLiveCollection,
                           "cannot launch: arguments.gpu: this strata-dap has no GPU backend", false});
    }
    auto* raw = session.startDebugger(*spec);
    auto self = session.shared_from_this();
    raw->launch(*spec, [self, respond, collecting](Result<void> r) {
      if (collecting)
        if (auto* gpu = self->gpu()) gpu->launched(r.ok());
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

 private:
  // launch {"trace"}: the session runs no program; every GPU request works on the trace.
  static void openTrace(Session& session, const protocol::LaunchRequestArguments& args, Responder respond) {
    auto gpu = gpuService(session);
    if (!gpu) return respond(gpu.takeError());
    auto spec = resolveTraceLaunch(args, adapterCwd());
    if (!spec) {
      Error e = spec.takeError();
      e.message = "cannot open trace: " + e.message;
      return respond(std::move(e));
    }
    auto self = session.shared_from_this();
    (*gpu)->openTrace(*spec, [self, respond](Result<json::value> r) {
      if (!r) {
        // The store's id stays (a malformed trace is 1902): the message names file and position.
        Error e = r.takeError();
        e.message = "cannot open trace: " + e.message;
        e.showUser = true;
        return respond(std::move(e));
      }
      self->launchedWithoutProgram();
      respond(json::value(nullptr));
      self->backendStarted();
    });
  }
};

}  // namespace

std::unique_ptr<Handler> makeLaunchHandler() { return std::make_unique<LaunchHandler>(); }

}  // namespace strata::adapter
