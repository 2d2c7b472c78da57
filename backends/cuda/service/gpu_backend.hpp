// The GPU backend: serves the session's GPU store beside whichever debugger runs the program
// (or alone, for a recorded trace): the custom GPU requests, the Debug Console's !gpu and !sql,
// trace imports with progress, and the hooks live collection (backends/cuda/live) plugs into.
#pragma once

#include <boost/asio.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "backends/cuda/service/launch_frames.hpp"
#include "backends/gpu.hpp"
#include "strata/cuda/store.hpp"

namespace strata::native::symbols {
class ObjectSymbols;
}

namespace strata::backends {

namespace asio = boost::asio;

// What a live collection does for the GPU backend: in launch mode, prepare the program's
// environment; drain the collectors at every stop and at the end; start and stop collecting in
// the running program (gpuStart/gpuStop, !gpu start|stop). LiveGpuCollection
// (live_collection.hpp) implements it over backends/cuda/live and feeds records through
// GpuBackend::store() and storeChanged().
class GpuCollectionControl {
 public:
  virtual ~GpuCollectionControl() = default;
  virtual Result<void> prepareLaunch(LaunchSpec& spec, const std::string& mode) = 0;
  virtual void launched(bool ok) = 0;
  // Whether collectors may be writing (so a stop or the end has something to drain).
  virtual bool active() const = 0;
  // At a stop: `done` once what the collectors hold is in the store (bounded wait).
  virtual void flush(std::function<void()> done) = 0;
  // The program ended: `done` once the last rings are drained (bounded wait).
  virtual void finish(std::function<void()> done) = 0;
  virtual void start(const std::string& mode, Reply<void> reply) = 0;
  virtual void stop(Reply<void> reply) = 0;
  // gpuProfile, !gpu profile: GpuCollection::requestProfile; the reply is {kernel, count,
  // processes} (processes asked now). A collection that cannot profile says so.
  virtual void profile(const std::string& kernel, std::uint32_t count, Reply<boost::json::value> reply) {
    (void)kernel;
    (void)count;
    reply(Error{errors::kNoLiveCollection,
                "hardware metrics are not available in this session: its GPU collection cannot take profile requests",
                false});
  }
};

class GpuBackend final : public Backend, public GpuService {
 public:
  GpuBackend(asio::io_context& io, BackendHost& host);
  ~GpuBackend() override;

  static BackendFeatures staticFeatures();

  // ---- Backend: no program, no threads, no breakpoints; its frames have no variables ----
  std::string name() const override { return "GPU"; }
  BackendFeatures features() const override { return staticFeatures(); }
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override { reply({}); }
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override { reply(std::vector<ThreadInfo>{}); }
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override { reply({}); }
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  GpuService* gpu() override { return this; }

  // ---- GpuService ----
  void setStorePath(std::string path) override;
  bool hasData() const override { return store_ != nullptr; }
  void openTrace(const GpuTraceSpec& spec, Reply<boost::json::value> reply) override;
  void abandonOpen() override;
  bool opening() const override { return import_ != nullptr; }
  void summary(std::size_t limit, Reply<boost::json::value> reply) override;
  void timeline(const GpuTimelineQuery& query, Reply<boost::json::value> reply) override;
  void kernel(std::uint64_t id, Reply<GpuRecordDetail> reply) override;
  void exportTrace(const GpuExportQuery& query, Reply<boost::json::value> reply) override;
  void console(const std::string& line, Reply<std::string> reply) override;
  void start(const std::string& mode, Reply<void> reply) override;
  void stop(Reply<void> reply) override;
  Result<void> prepareLaunch(LaunchSpec& spec, const std::string& mode) override;
  void launched(bool ok) override;
  void programStopped() override;
  void crashContext(std::int64_t pid, std::int64_t tid, std::uint64_t stopNs, Reply<std::string> reply) override;
  void programEnded(std::function<void()> done) override;
  void profile(const std::string& kernel, std::uint32_t count, Reply<boost::json::value> reply) override;

  // ---- for live collection (backends/cuda/live) ----
  void attachCollection(std::shared_ptr<GpuCollectionControl> collection) { collection_ = std::move(collection); }
  // The session's store, made on first use (where setStorePath said, else a new temporary file,
  // named in an output event). On the session's thread only.
  Result<cuda::Store*> store();
  // New records went into the store: a gpuActivity event follows, at most one per 100 ms
  // (the last change is never left unannounced).
  void storeChanged();
  // The store's file (empty until store() made it).
  const std::string& storePath() const { return storePath_; }
  // Tells the user (an output event).
  void tell(OutputCategory category, std::string text) { host_.output(category, std::move(text)); }

 private:
  struct Import;
  Result<cuda::Store*> requireData(const char* what);
  void announce();
  void finishImport(const std::shared_ptr<Import>& job);
  // Runs `work` now, or once the drain at the current stop is done (GPU requests made while
  // stopped see everything the program's collectors held).
  void afterFlush(std::function<void()> work);
  gpu::NativeLaunchFrame resolveNative(std::uint64_t pc, const cuda::NativeFrame* resolved);
  FrameInfo launchFrame(const gpu::LaunchFrame& f);
  // Symbols of the modules native launch frames name, opened once (null: not readable here).
  std::map<std::string, std::shared_ptr<native::symbols::ObjectSymbols>> modules_;

  asio::io_context& io_;
  BackendHost& host_;
  std::string storePath_;
  std::unique_ptr<cuda::Store> store_;
  std::shared_ptr<Import> import_;  // the trace being imported
  std::shared_ptr<GpuCollectionControl> collection_;
  int flushing_ = 0;  // drains at stops not yet done
  std::vector<std::function<void()>> afterFlush_;
  // The last crash stop (crashContext), for !gpu crash.
  struct Crash {
    std::int64_t pid = 0, tid = 0;
    std::uint64_t stopNs = 0;
  };
  std::optional<Crash> lastCrash_;
  std::uint64_t frames_ = 0;  // launch frames handed out (their ids)
  int progressIds_ = 0;
  std::chrono::steady_clock::time_point lastAnnounced_{};
  bool announcePending_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
