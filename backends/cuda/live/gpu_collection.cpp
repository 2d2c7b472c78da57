// GpuCollection: rings drained into the store on the session's executor, and what the user is
// told about them (see gpu_collection.hpp and this folder's README).
#include "strata/cuda_frames.hpp"
#include "strata/cuda/live/gpu_collection.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "dump_report.hpp"

namespace strata::cuda {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr auto kStopPollStep = std::chrono::milliseconds(2);
constexpr auto kExitPollStep = std::chrono::milliseconds(20);

std::string randomToken() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) s += hex[rd() & 15];
  return s;
}

Result<std::string> makeRingDirectory() {
  std::vector<std::string> bases;
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x) bases.emplace_back(x);
  bases.emplace_back("/dev/shm");  // tmpfs: the rings never touch a disk
  if (const char* t = std::getenv("TMPDIR"); t && *t) bases.emplace_back(t);
  bases.emplace_back("/tmp");
  std::string tried;
  for (const auto& base : bases) {
    if (access(base.c_str(), W_OK) != 0) continue;
    std::string tmpl = base + "/strata-gpu-XXXXXX";
    if (mkdtemp(tmpl.data())) return tmpl;
    tried += (tried.empty() ? "" : ", ") + base + " (" + std::strerror(errno) + ")";
  }
  return Error{errors::kGpuRingDirectory,
               "cannot make a directory for the GPU rings in $XDG_RUNTIME_DIR, /dev/shm, $TMPDIR or /tmp" +
                   (tried.empty() ? std::string(": none is writable") : ": " + tried),
               true};
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", v);
  return buf;
}

// A profile request's NAME[:N], as the collector's STRATA_GPU_PROFILE takes it.
Result<void> checkProfile(const std::string& kernel, std::uint32_t count) {
  if (kernel.empty() || kernel.size() >= ring::kProfileKernelSize || kernel.find_first_of(" \t\n;") != std::string::npos)
    return Error{errors::kBadArguments,
                 "profile: the kernel must be a name or part of one, 1 to " + std::to_string(ring::kProfileKernelSize - 1) +
                     " bytes without spaces or ';' (got '" + kernel + "')",
                 false};
  if (count < 1 || count > ring::kMaxProfileLaunches)
    return Error{errors::kBadArguments,
                 "profile: the count of launches must be 1 to " + std::to_string(ring::kMaxProfileLaunches) + " (got " +
                     std::to_string(count) + ")",
                 false};
  return {};
}

std::string where(const NativeFrame& f) {
  std::string s = f.function.empty() ? f.symbol : f.function;
  if (!f.file.empty()) s += (s.empty() ? "" : " at ") + fs::path(f.file).filename().string() + ":" + std::to_string(f.line);
  else if (!f.module.empty()) s += (s.empty() ? "" : " in ") + fs::path(f.module).filename().string();
  return s;
}

}  // namespace

struct GpuCollection::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::any_io_executor ex, Store& s) : executor(ex), tick(ex), wait(ex), store(s) {}

  asio::any_io_executor executor;
  asio::steady_timer tick, wait;
  Store& store;
  GpuCollectionOptions options;
  GpuCallbacks callbacks;
  CollectorFiles files;
  bool madeDir = false;
  std::unique_ptr<SessionReader> reader;
  Batch batch;
  std::vector<std::uint32_t> names;  // session string id -> store name id (0: not yet interned)
  std::vector<GpuRecord> records;
  dump::LineResolver lines;
  struct Process {
    ring::State reported = ring::State::Starting;
    bool saidDropped = false;
    std::uint64_t dropped = 0;
  };
  std::map<std::string, Process> processes;  // by ring file: an exec'd image of a pid has its own
  std::set<std::string> saidRings;  // ring paths whose trouble was reported
  std::uint64_t newRecords = 0, newDropped = 0;
  bool started = false, finishing = false, finished = false;
  bool saidNoCollector = false, saidStore = false, saidDir = false, sawRing = false;
  std::vector<std::function<void()>> stopWaiters;
  std::chrono::steady_clock::time_point deadline;

  void note(GpuNote::Kind kind, std::uint32_t pid, bool problem, std::string text) {
    if (callbacks.note) callbacks.note(GpuNote{kind, pid, problem, std::move(text)});
  }

  std::uint32_t storeName(std::uint32_t sessionId) {
    if (sessionId == 0) return 0;
    if (names.size() <= sessionId) names.resize(sessionId + 1, 0);
    if (!names[sessionId]) names[sessionId] = store.internName(reader->string(sessionId));
    return names[sessionId];
  }

  // Native frames resolved to function, file and line from the modules' DWARF while they are
  // on disk as the target loaded them (once per site: sites are deduplicated by the collector).
  void resolve(std::vector<NativeFrame>& frames) {
    for (NativeFrame& f : frames) {
      if (f.module.empty() || !f.function.empty()) continue;
      auto w = lines.resolve(f.module, f.elfAddress);
      f.function = w.function.empty() ? f.symbol : w.function;
      f.file = w.file;
      f.line = w.line;
    }
  }

  void storeFailed(const Error& e) {
    if (saidStore) return;
    saidStore = true;
    note(GpuNote::Kind::RingProblem, 0, true, "GPU records could not be stored in " + store.path() + ": " + e.message);
  }

  GpuError toError(const CudaErrorEvent& e) {
    GpuError g{.pid = e.pid, .tid = e.tid, .api = e.api, .error = e.error, .result = e.result,
               .lastKernel = e.lastKernel.empty() ? std::string() : demangle(e.lastKernel),
               .lastCorrelation = e.lastCorrelation, .lastSite = e.lastSite, .timeNs = e.time};
    if (const LaunchSite* s = reader->site(e.lastSite)) {
      g.lastLaunchPython = s->python;
      g.lastLaunchNative = s->nativeFrames;
      resolve(g.lastLaunchNative);
    }
    g.caller.pc = e.callerPc;
    g.caller.elfAddress = e.callerElfAddress;
    g.caller.module = e.callerModule;
    std::vector<NativeFrame> callers = e.callers.empty() ? std::vector<NativeFrame>{g.caller} : e.callers;
    resolve(callers);
    g.caller = callers[0];
    // A CUDA runtime linked into the program is the program's module too: its call is the first
    // frame with a line of the program's own source.
    for (const NativeFrame& f : callers)
      if (!f.file.empty() && !cuda_frames::isCudaHeader(f.file) && !cuda_frames::isRuntimeFunction(f.function)) {
        g.caller = f;
        break;
      }
    g.message = g.error + " (" + std::to_string(g.result) + ") returned by " + g.api;
    if (const std::string at = where(g.caller); !at.empty()) g.message += " called from " + at;
    g.message += " in process " + std::to_string(g.pid) + ", thread " + std::to_string(g.tid) +
                 "; the GPU context is unusable after it";
    if (!g.lastKernel.empty()) {
      g.message += "; the last kernel this thread launched: " + g.lastKernel;
      if (!g.lastLaunchPython.empty())
        g.message += " (from " + fs::path(g.lastLaunchPython[0].file).filename().string() + ":" +
                     std::to_string(g.lastLaunchPython[0].line) + ")";
      else
        for (const NativeFrame& f : g.lastLaunchNative)
          if (!f.file.empty()) {
            g.message += " (from " + where(f) + ")";
            break;
          }
    }
    return g;
  }

  // A launch measured at a profile request, or why the request measured none: stored (gpuKernel
  // shows it on that launch) and said once.
  void profiled(const KernelMetricsEvent& e) {
    const KernelMetrics& k = e.metrics;
    if (auto r = store.addKernelMetrics(k); !r) storeFailed(r.error());
    if (!k.error.empty()) return note(GpuNote::Kind::Profile, k.pid, true, k.error);
    std::string text = "hardware metrics of " + demangle(k.kernel) + " (process " + std::to_string(k.pid) +
                       ", correlation " + std::to_string(k.correlation) + "):";
    if (k.smThroughputPct) text += " SM throughput " + percent(*k.smThroughputPct) + ",";
    if (k.dramThroughputPct) text += " DRAM throughput " + percent(*k.dramThroughputPct) + ",";
    if (k.achievedOccupancyPct) text += " achieved occupancy " + percent(*k.achievedOccupancyPct) + ",";
    if (k.durationNs) text += " GPU time " + std::to_string(static_cast<std::uint64_t>(*k.durationNs + 0.5)) + " ns,";
    text.pop_back();
    text += e.remaining ? "; " + std::to_string(e.remaining) + " more to measure" : "; the profile request is done";
    note(GpuNote::Kind::Profile, k.pid, false, text);
  }

  void statuses() {
    for (const CollectorStatus& s : reader->processes()) {
      sawRing = true;
      Process& p = processes[s.path];
      if (!s.problem.empty() && saidRings.insert(s.path).second)
        note(GpuNote::Kind::RingProblem, s.pid, true, "process " + std::to_string(s.pid) + ": " + s.problem);
      if (s.state != p.reported) {
        const std::string pid = std::to_string(s.pid);
        switch (s.state) {
          case ring::State::Collecting:
            note(GpuNote::Kind::Collecting, s.pid, false,
                 "GPU collection (" + std::string(ring::modeName(s.mode)) + ") in process " + pid);
            break;
          case ring::State::Off:
            note(GpuNote::Kind::Off, s.pid, false,
                 "the GPU collector is loaded in process " + pid + " and collects nothing until a start (mode off)");
            break;
          case ring::State::StoodAside:
            note(GpuNote::Kind::StoodAside, s.pid, true, "no GPU collection in process " + pid + ": " + s.text);
            break;
          case ring::State::Refused:
            note(GpuNote::Kind::Refused, s.pid, true, "no GPU collection in process " + pid + ": " + s.text);
            break;
          case ring::State::Failed:
            note(GpuNote::Kind::Failed, s.pid, true, "no GPU collection in process " + pid + ": " + s.text);
            break;
          case ring::State::Starting:
          case ring::State::Stopped:
            break;  // on the way to one of the above, or a late stop the user asked for
        }
        if (s.state != ring::State::Starting) p.reported = s.state;
      }
      const std::uint64_t dropped = s.droppedRecords + s.cuptiDropped;
      if (dropped > p.dropped) {
        const std::uint64_t delta = dropped - p.dropped;
        p.dropped = dropped;
        newDropped += delta;
        if (auto r = store.addDropped(s.pid, delta); !r) storeFailed(r.error());
        if (!p.saidDropped) {
          p.saidDropped = true;
          note(GpuNote::Kind::Dropped, s.pid, true,
               "process " + std::to_string(s.pid) + " lost GPU records (" + std::to_string(s.droppedRecords) +
                   " found the ring full, " + std::to_string(s.cuptiDropped) +
                   " dropped inside CUPTI): the timeline has gaps; every loss is counted in `dropped` "
                   "(a larger STRATA_GPU_RING_MB or STRATA_GPU_BUFFER_MB helps)");
        }
      }
    }
  }

  void poll() {
    if (!reader) return;
    batch.clear();
    if (auto r = reader->poll(batch, options.maxRecordsPerPoll); !r) {
      if (!saidDir) {
        saidDir = true;
        note(GpuNote::Kind::RingProblem, 0, true, r.error().message);
      }
      return;
    }
    for (LaunchSite& site : batch.sites) {
      resolve(site.nativeFrames);
      if (auto r = store.addLaunchSite(site); !r) storeFailed(r.error());
    }
    for (const GraphNodeSite& node : batch.graphNodes)
      if (auto r = store.addGraphNode(node); !r) storeFailed(r.error());
    // A device's properties make occupancy estimates possible in this session's views.
    for (const DeviceProperties& device : batch.devices)
      if (auto r = store.setDeviceProperties(device); !r) storeFailed(r.error());
    if (!batch.records.empty()) {
      records.assign(batch.records.begin(), batch.records.end());
      for (GpuRecord& rec : records) rec.name = storeName(rec.name);
      if (auto r = store.ingest(records); !r) storeFailed(r.error());
      else newRecords += records.size();
    }
    statuses();
    for (const KernelMetricsEvent& e : batch.metrics) profiled(e);
    if (auto r = store.flush(); !r) storeFailed(r.error());
    // Errors after the records: the store then holds the failed kernel when the stop is shown.
    for (const CudaErrorEvent& e : batch.errors)
      if (callbacks.error) callbacks.error(toError(e));
    if ((newRecords || newDropped) && callbacks.activity) {
      GpuActivity a{store.counts(), newRecords, newDropped};
      newRecords = newDropped = 0;
      callbacks.activity(a);
    }
  }

  void arm() {
    if (finished) return;
    tick.expires_after(options.period);
    tick.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->finished) return;
      self->poll();
      self->arm();
    });
  }

  void waitStop() {
    wait.expires_after(kStopPollStep);
    wait.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      if (!self->reader->flushServed() && std::chrono::steady_clock::now() < self->deadline && !self->finished)
        return self->waitStop();
      self->poll();
      auto waiters = std::move(self->stopWaiters);
      self->stopWaiters.clear();
      for (auto& w : waiters)
        if (w) w();
    });
  }

  void waitExit(std::function<void()> done) {
    poll();
    bool alive = false;
    for (const auto& p : reader ? reader->processes() : std::vector<CollectorStatus>{}) alive = alive || p.alive;
    if (alive && std::chrono::steady_clock::now() < deadline) {
      wait.expires_after(kExitPollStep);
      wait.async_wait([weak = weak_from_this(), done = std::move(done)](const boost::system::error_code& ec) mutable {
        auto self = weak.lock();
        if (ec || !self) return;
        self->waitExit(std::move(done));
      });
      return;
    }
    finished = true;
    tick.cancel();
    if (!sawRing && !saidNoCollector) {
      const std::string machine = machineGpuProblem();
      note(GpuNote::Kind::NoRing, 0, true,
           machine.empty()
               ? "no GPU collection happened: no process of the program initialized CUDA (the CUDA driver loads "
                 "Strata's collector at a process's first CUDA call, and no collector ring appeared in " +
                     options.dir + ")"
               : "no GPU collection happened: " + machine + " (no collector ring appeared in " + options.dir + ")");
    }
    auto waiters = std::move(stopWaiters);
    stopWaiters.clear();
    for (auto& w : waiters)
      if (w) asio::post(executor, std::move(w));
    if (done) asio::post(executor, std::move(done));
  }
};

GpuCollection::GpuCollection(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<GpuCollection>> GpuCollection::create(asio::any_io_executor executor, Store& store,
                                                             GpuCollectionOptions options, GpuCallbacks callbacks) {
  auto impl = std::make_shared<Impl>(executor, store);
  options.period = std::clamp(options.period, std::chrono::milliseconds(10), std::chrono::milliseconds(100));
  if (options.session.empty()) options.session = randomToken();
  if (options.session.size() >= ring::kSessionSize)
    return Error{errors::kGpuSetting, "GPU session token longer than " + std::to_string(ring::kSessionSize - 1) + " bytes", true};
  if (options.dir.empty()) {
    auto made = makeRingDirectory();
    if (!made) return made.takeError();
    options.dir = *made;
    impl->madeDir = true;
  } else if (mkdir(options.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return errnoError(errors::kGpuRingDirectory, "make the GPU ring directory " + options.dir);
  }
  if (!options.profile.empty()) {
    std::string kernel;
    unsigned count = 0;
    if (auto r = parseProfile(options.profile, kernel, count); !r) return r.takeError();
  }
  impl->files = options.collector.empty() ? locateCollector(options.executable) : collectorAt(options.collector);
  impl->reader = std::make_unique<SessionReader>(options.dir, options.session);
  impl->options = std::move(options);
  impl->callbacks = std::move(callbacks);
  return std::unique_ptr<GpuCollection>(new GpuCollection(std::move(impl)));
}

GpuCollection::~GpuCollection() {
  Impl& m = *impl_;
  m.finished = true;
  m.tick.cancel();
  m.wait.cancel();
  if (!m.options.keepRings && m.reader) {
    for (const auto& p : m.reader->processes()) unlink(p.path.c_str());
    m.reader.reset();
    if (m.madeDir) {
      std::error_code ec;
      fs::remove_all(m.options.dir, ec);
    }
  }
}

std::vector<std::pair<std::string, std::string>> GpuCollection::environment() const {
  const Impl& m = *impl_;
  if (m.files.collector.empty()) return {};
  std::vector<std::pair<std::string, std::string>> env{
      {"CUDA_INJECTION64_PATH", m.files.collector},
      {"STRATA_GPU_MODE", std::string(gpuModeName(m.options.mode))},
      {"STRATA_GPU_DIR", m.options.dir},
      {"STRATA_GPU_SESSION", m.options.session},
      {"STRATA_GPU_FLUSH_MS", std::to_string(m.options.period.count())}};
  if (!m.files.cupti.empty()) env.emplace_back("NVTX_INJECTION64_PATH", m.files.cupti);
  if (!m.options.profile.empty()) env.emplace_back("STRATA_GPU_PROFILE", m.options.profile);
  return env;
}

Result<LateStart> GpuCollection::lateStart(std::optional<GpuMode> mode) const {
  const Impl& m = *impl_;
  if (m.files.collector.empty()) {
    std::string looked;
    for (const auto& s : m.files.searched) looked += (looked.empty() ? "" : ", ") + s;
    return Error{errors::kGpuCollectorMissing,
                 "Strata's GPU collector libstrata_cupti.so was not found (looked in " + looked +
                     "); it is built when CMake finds the CUDA toolkit with CUPTI",
                 true};
  }
  if (m.options.dir.find_first_of(" \t\n;") != std::string::npos)
    return Error{errors::kGpuRingDirectory,
                 "the GPU ring directory '" + m.options.dir + "' holds a space or ';', which strata_gpu_start cannot take", true};
  LateStart l;
  l.collector = m.files.collector;
  GpuMode wanted = mode.value_or(m.options.mode);
  if (wanted == GpuMode::Off) wanted = GpuMode::Trace;
  l.config = "mode=" + std::string(gpuModeName(wanted)) +
             " dir=" + m.options.dir + " session=" + m.options.session +
             " flush_ms=" + std::to_string(m.options.period.count());
  return l;
}

Result<std::size_t> GpuCollection::requestProfile(const std::string& kernel, std::uint32_t count) {
  if (auto r = checkProfile(kernel, count); !r) return r.takeError();
  Impl& m = *impl_;
  if (!m.reader) return std::size_t{0};
  m.poll();  // rings that appeared since the last tick are asked too
  return m.reader->requestProfile(kernel, count);
}

Result<void> parseProfile(const std::string& text, std::string& kernel, unsigned& count) {
  std::string_view name = text;
  count = 1;
  if (auto colon = text.rfind(':'); colon != std::string::npos && colon + 1 < text.size() &&
                                    text.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
    name = std::string_view(text).substr(0, colon);
    count = text.size() - colon - 1 > 3 ? 0 : static_cast<unsigned>(std::stoul(text.substr(colon + 1)));
  }
  kernel = std::string(name);
  return checkProfile(kernel, count);
}

void GpuCollection::start() {
  Impl& m = *impl_;
  if (m.started) return;
  m.started = true;
  if (m.files.collector.empty() && !m.saidNoCollector) {
    m.saidNoCollector = true;
    std::string looked;
    for (const auto& s : m.files.searched) looked += (looked.empty() ? "" : ", ") + s;
    m.note(GpuNote::Kind::NoCollector, 0, true,
           "no GPU collection: Strata's collector libstrata_cupti.so was not found (looked in " + looked +
               "; it is built when CMake finds the CUDA toolkit with CUPTI); the program runs without it");
  }
  m.arm();
}

void GpuCollection::poll() { impl_->poll(); }

void GpuCollection::flushAtStop(std::function<void()> done) {
  Impl& m = *impl_;
  if (m.finished || !m.reader) {
    m.poll();
    if (done) asio::post(m.executor, std::move(done));
    return;
  }
  m.stopWaiters.push_back(std::move(done));
  // A flush under way, or the exit's drain, answers every waiter.
  if (m.stopWaiters.size() > 1 || m.finishing) return;
  m.poll();  // rings that appeared since the last tick
  if (m.reader->requestFlush() == 0) {
    m.poll();
    auto waiters = std::move(m.stopWaiters);
    m.stopWaiters.clear();
    for (auto& w : waiters)
      if (w) asio::post(m.executor, std::move(w));
    return;
  }
  m.deadline = std::chrono::steady_clock::now() + m.options.stopFlush;
  m.waitStop();
}

void GpuCollection::finish(std::function<void()> done) {
  Impl& m = *impl_;
  if (m.finishing) {
    if (done) asio::post(m.executor, std::move(done));
    return;
  }
  m.finishing = true;
  m.wait.cancel();
  m.deadline = std::chrono::steady_clock::now() + m.options.exitGrace;
  m.waitExit(std::move(done));
}

GpuMode GpuCollection::mode() const { return impl_->options.mode; }
const std::string& GpuCollection::dir() const { return impl_->options.dir; }
const std::string& GpuCollection::session() const { return impl_->options.session; }
const CollectorFiles& GpuCollection::files() const { return impl_->files; }
std::vector<CollectorStatus> GpuCollection::processes() const {
  return impl_->reader ? impl_->reader->processes() : std::vector<CollectorStatus>{};
}
bool GpuCollection::sawRing() const { return impl_->sawRing; }
Store& GpuCollection::store() { return impl_->store; }

}  // namespace strata::cuda
