// What a backend that serves GPU data offers the session: the custom GPU requests, the Debug
// Console's !gpu and !sql commands, and the hooks live collection plugs into. The GPU backend
// (backends/cuda/service) implements it over the session's store; the session and its
// handlers know only this interface, so they build without the store.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace strata::backends {

// launch {"trace": PATH}: the file and the session's store (empty: a new temporary file).
struct GpuTraceSpec {
  std::string path;  // absolute
  std::string storePath;
};

struct GpuTimelineQuery {
  std::optional<std::uint64_t> startNs, endNs;  // absent: the store's whole span
  std::uint32_t maxItems = 0;
};

struct GpuExportQuery {
  std::string format;  // chrome | perfetto
  std::string path;    // empty: beside the session's store
  std::optional<std::uint64_t> startNs, endNs;
};

// gpuKernel: the record in full (JSON, without frames) and the frames that launched it,
// innermost first, with ids of the GPU backend's own (the session makes them global).
struct GpuRecordDetail {
  boost::json::object body;
  std::vector<FrameInfo> frames;
};

class GpuService {
 public:
  virtual ~GpuService() = default;

  // The store file of this session (a launch's "gpuStore"): data that comes later goes there.
  virtual void setStorePath(std::string path) = 0;
  // Whether the session holds GPU data yet (a trace opened, or collection started).
  virtual bool hasData() const = 0;
  // launch {"trace"}: imports the file into the session's store, or opens a Strata store as it is.
  // The reply is the import's report (format, events, records, skipped) as JSON.
  virtual void openTrace(const GpuTraceSpec& spec, Reply<boost::json::value> reply) = 0;
  // The launch or cancel gave up on openTrace: stop the import; its reply is dropped.
  virtual void abandonOpen() = 0;
  // A trace is being opened (openTrace has not answered yet).
  virtual bool opening() const = 0;

  // The custom requests' bodies (tests/e2e/schema/strataCustom.json).
  virtual void summary(std::size_t limit, Reply<boost::json::value> reply) = 0;
  virtual void timeline(const GpuTimelineQuery& query, Reply<boost::json::value> reply) = 0;
  virtual void kernel(std::uint64_t id, Reply<GpuRecordDetail> reply) = 0;
  virtual void exportTrace(const GpuExportQuery& query, Reply<boost::json::value> reply) = 0;

  // One Debug Console line after its '!', starting "gpu" or "sql" ("gpu top 5", "sql SELECT 1"):
  // the answer as readable text.
  virtual void console(const std::string& line, Reply<std::string> reply) = 0;

  // Live collection (gpuStart/gpuStop, !gpu start|stop): answered through the collection
  // attached to the backend, or with an error saying there is none in this session.
  virtual void start(const std::string& mode, Reply<void> reply) = 0;
  virtual void stop(Reply<void> reply) = 0;
  // gpuProfile / !gpu profile NAME [N]: hardware metrics of the next `count` launches of kernels
  // whose names contain `kernel`, measured by the live collection; the reply's body says what
  // was asked ({kernel, count, processes}). Without live collection, the same error as start.
  virtual void profile(const std::string& kernel, std::uint32_t count, Reply<boost::json::value> reply) {
    (void)kernel;
    (void)count;
    reply(Error{errors::kNoLiveCollection, "live GPU collection is not available in this session", false});
  }

  // ---- the program the session's debugger runs (the session calls these) ----
  // Launch mode: GPU collection in the program about to be launched (`mode`: off, trace,
  // stacks). What the program needs (the collector in its environment) goes into `spec`
  // before the debugger starts it. Fails when this session cannot collect, saying why.
  virtual Result<void> prepareLaunch(LaunchSpec& spec, const std::string& mode) {
    (void)spec, (void)mode;
    return Error{errors::kNoLiveCollection, "live GPU collection is not available in this session", false};
  }
  // The launch prepared above started the program (ok), or failed and what was prepared goes.
  virtual void launched(bool ok) { (void)ok; }
  // The program stopped: what its collectors hold is drained into the store; GPU requests made
  // meanwhile are answered after that.
  virtual void programStopped() {}
  // The program stopped at a crash (a fatal signal) in thread `tid` of process `pid`, reported
  // at `stopNs` (CLOCK_REALTIME, the clock of GPU records): what the GPU was doing, as text for
  // the Debug Console, once the stop's drain is done; empty when nothing of the process was
  // collected.
  virtual void crashContext(std::int64_t pid, std::int64_t tid, std::uint64_t stopNs, Reply<std::string> reply) {
    (void)pid, (void)tid, (void)stopNs;
    reply(std::string());
  }
  // The program ended: `done` runs once the last of its GPU data is in the store (at once,
  // before this returns, when nothing collects).
  virtual void programEnded(std::function<void()> done) { done(); }
};

}  // namespace strata::backends
