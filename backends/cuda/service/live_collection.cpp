// Live GPU collection in a debug session (see live_collection.hpp and backends/cuda/live/README.md,
// "The adapter's wiring"): every call and callback on the session's thread.
#include "live_collection.hpp"

#include <algorithm>
#include <utility>

namespace strata::backends {

namespace {

std::string commandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

bool isMode(const std::string& text) { return text == "trace" || text == "stacks"; }

Error noProgram() {
  return Error{errors::kNoLiveCollection,
               "no program runs in this session: GPU collection starts and stops in a running program (launch one "
               "with \"gpu\": \"trace\" or \"stacks\", or start it while one runs)",
               false};
}

}  // namespace

LiveGpuCollection::LiveGpuCollection(asio::io_context& io, GpuBackend& gpu, std::function<Backend*()> debugger,
                                     std::string executable)
    : io_(io), gpu_(gpu), debugger_(std::move(debugger)), executable_(std::move(executable)) {}

LiveGpuCollection::~LiveGpuCollection() { *alive_ = false; }

cuda::GpuCallbacks LiveGpuCollection::callbacks() {
  cuda::GpuCallbacks cb;
  cb.activity = [this](const cuda::GpuActivity&) { gpu_.storeChanged(); };
  // The program has stopped on it already (the agent's hook, the native debugger's hidden
  // breakpoint) when the `cuda` filter is on; the console keeps the sentence either way.
  cb.error = [this](const cuda::GpuError& e) {
    gpu_.tell(OutputCategory::Console, "CUDA error in process " + std::to_string(e.pid) + ": " + e.message + "\n");
  };
  cb.note = [this](const cuda::GpuNote& n) {
    gpu_.tell(n.problem ? OutputCategory::Important : OutputCategory::Console, n.text + "\n");
  };
  return cb;
}

Result<cuda::GpuCollection*> LiveGpuCollection::make(cuda::GpuMode mode, const std::string& command) {
  auto store = gpu_.store();
  if (!store) return store.takeError();
  (void)(*store)->setMeta("collected_by", "strata-dap");
  if (!command.empty()) (void)(*store)->setMeta("command", command);
  (void)(*store)->setMeta("gpu_mode", std::string(cuda::gpuModeName(mode)));
  cuda::GpuCollectionOptions options;
  options.mode = mode;
  options.executable = executable_;
  auto made = cuda::GpuCollection::create(io_.get_executor(), **store, options, callbacks());
  if (!made) return made.takeError();
  collection_ = std::move(*made);
  ended_ = false;
  collecting_ = false;
  return collection_.get();
}

// ---- launch mode ------------------------------------------------------------------------------

Result<void> LiveGpuCollection::prepareLaunch(LaunchSpec& spec, const std::string& text) {
  auto mode = cuda::parseGpuMode(text);
  if (!mode) {
    Error e = mode.takeError();
    e.message = "arguments.gpu: " + e.message;
    return e;
  }
  if (collection_ && !ended_)
    return Error{errors::kGpuCollectionState, "GPU collection already runs in this session", false};
  collection_.reset();  // an earlier program's, over
  auto made = make(*mode, commandLine(spec.argv));
  if (!made) return made.takeError();
  for (const auto& [name, value] : (*made)->environment()) {
    const std::string prefix = name + "=";
    auto it = std::find_if(spec.environment.begin(), spec.environment.end(),
                           [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    if (it == spec.environment.end()) {
      spec.environment.push_back(prefix + value);
      continue;
    }
    const std::string theirs = it->substr(prefix.size());
    if (name == "CUDA_INJECTION64_PATH" && theirs != value) {
      // One CUPTI client per process: the program's own injection and ours cannot both load.
      collection_.reset();
      return Error{errors::kGpuSetting,
                   "arguments.gpu: the launch's environment sets CUDA_INJECTION64_PATH=" + theirs +
                       " (another CUDA injection); Strata's GPU collection loads its collector through that variable: "
                       "remove it from \"env\", or launch without \"gpu\"",
                   true};
    }
    // Someone else's NVTX tool keeps the ranges; ours goes without them.
    if (name == "NVTX_INJECTION64_PATH") continue;
    *it = prefix + value;
  }
  collecting_ = *mode != cuda::GpuMode::Off;
  mode_ = *mode;
  return {};
}

void LiveGpuCollection::launched(bool ok) {
  if (!collection_) return;
  if (!ok) {
    collection_.reset();
    collecting_ = false;
    return;
  }
  collection_->start();
}

void LiveGpuCollection::flush(std::function<void()> done) {
  if (!collection_ || ended_) return done();
  collection_->flushAtStop(std::move(done));
}

void LiveGpuCollection::finish(std::function<void()> done) {
  if (!collection_ || ended_) return done();
  ended_ = true;
  collecting_ = false;
  collection_->finish(std::move(done));
}

// ---- late start and stop --------------------------------------------------------------------

Result<Backend*> LiveGpuCollection::programToCommand() {
  if (busy_) return Error{errors::kGpuCollectionState, "a GPU collection start or stop is already on its way", false};
  Backend* program = debugger_ ? debugger_() : nullptr;
  if (!program || ended_) return noProgram();
  return program;
}

void LiveGpuCollection::command(Backend& program, GpuCollectorCommand c, std::string instead,
                                std::function<void(Reply<void>)> done, Reply<void> reply) {
  busy_ = true;
  std::weak_ptr<bool> alive = alive_;
  program.gpuCollector(c, [this, alive, instead = std::move(instead), done = std::move(done), reply](Result<std::string> r) {
    auto a = alive.lock();
    if (!a || !*a) return;
    busy_ = false;
    if (!r) {
      Error e = r.takeError();
      if (e.id == errors::kUnsupportedRequest) e.message += "; " + instead;
      return reply(std::move(e));
    }
    done(reply);
  });
}

void LiveGpuCollection::start(const std::string& text, Reply<void> reply) {
  if (!isMode(text))
    return reply(Error{errors::kBadArguments, "gpuStart: mode '" + text + "' is not one of trace, stacks", false});
  auto program = programToCommand();
  if (!program) return reply(program.takeError());
  if (collecting_)
    return reply(Error{errors::kGpuCollectionState,
                       "GPU collection is already running (" + std::string(cuda::gpuModeName(mode_)) +
                           "); stop it first",
                       false});
  const cuda::GpuMode mode = text == "stacks" ? cuda::GpuMode::Stacks : cuda::GpuMode::Trace;
  if (!collection_) {
    auto made = make(mode, "");
    if (!made) return reply(made.takeError());
  }
  auto late = collection_->lateStart(mode);
  if (!late) return reply(late.takeError());
  command(**program, GpuCollectorCommand{true, late->collector, late->config},
          "launch the program with \"gpu\": \"trace\" or \"stacks\" instead",
          [this, mode](Reply<void> done) {
            collecting_ = true;
            mode_ = mode;
            collection_->start();
            collection_->poll();
            done({});
          },
          std::move(reply));
}

void LiveGpuCollection::stop(Reply<void> reply) {
  auto program = programToCommand();
  if (!program) return reply(program.takeError());
  if (!collection_ || !collecting_)
    return reply(Error{errors::kGpuCollectionState, "GPU collection is not running in this session", false});
  command(**program, GpuCollectorCommand{false, collection_->files().collector, ""}, "collection ends with the program",
          [this](Reply<void> done) {
            collecting_ = false;
            // What the collector flushed while stopping goes into the store first.
            std::weak_ptr<bool> alive = alive_;
            collection_->flushAtStop([alive, done] {
              if (auto b = alive.lock(); b && *b) done({});
            });
          },
          std::move(reply));
}

// ---- hardware metrics ------------------------------------------------------------------------

void LiveGpuCollection::profile(const std::string& kernel, std::uint32_t count, Reply<boost::json::value> reply) {
  Backend* program = debugger_ ? debugger_() : nullptr;
  if (!program || ended_ || !collection_ || !collecting_)
    return reply(Error{errors::kNoLiveCollection,
                       "no program collects GPU activity in this session: hardware metrics are measured in a program "
                       "launched with \"gpu\": \"trace\" or \"stacks\" (or after !gpu start)",
                       false});
  auto asked = collection_->requestProfile(kernel, count);
  if (!asked) return reply(asked.takeError());
  reply(boost::json::value(
      boost::json::object{{"kernel", kernel}, {"count", count}, {"processes", static_cast<std::int64_t>(*asked)}}));
}

}  // namespace strata::backends
