// The GPU backend over the session's store: trace imports on a thread of their own (with
// progress), queries and console commands on the session's thread, where the store lives.
#include "gpu_backend.hpp"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "console_text.hpp"
#include "strata/native/symbols/object_symbols.hpp"
#include "strata/cuda/import.hpp"
#include "strata/cuda/store_json.hpp"

namespace strata::backends {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr auto kActivityEvery = std::chrono::milliseconds(100);
constexpr auto kProgressEvery = std::chrono::milliseconds(100);

std::string basename(const std::string& path) { return fs::path(path).filename().string(); }

// A new temporary store: its own folder, so no other file is ever in the way.
Result<std::string> temporaryStore() {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/strata-gpu-XXXXXX";
  if (!::mkdtemp(dir.data())) return errnoError(errors::kStoreIo, "mkdtemp " + dir, errno);
  return dir + "/session.strata";
}

void removeTemporary(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  fs::remove(fs::path(path).parent_path(), ec);  // only if empty
}

// How a session gets GPU data.
constexpr const char* kHowToGetData =
    "open a recorded trace with launch {\"trace\": PATH} (Kineto JSON, Nsight Systems SQLite, a Strata store), "
    "or collect it from a program";

std::string noData() { return std::string("no GPU data in this session yet: ") + kHowToGetData; }

std::string hex(std::uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, a);
  return buf;
}

}  // namespace

struct GpuBackend::Import {
  GpuTraceSpec spec;
  std::string storePath;
  bool temporary = false;
  std::string progressId;
  Reply<json::value> reply;
  std::atomic<bool> cancel{false};
  std::thread thread;
  std::optional<Result<cuda::OpenedTrace>> result;  // set by the thread
};

GpuBackend::GpuBackend(asio::io_context& io, BackendHost& host) : io_(io), host_(host) {}

GpuBackend::~GpuBackend() {
  *alive_ = false;
  collection_.reset();  // it writes into store_
  if (import_) {
    import_->cancel = true;
    if (import_->thread.joinable()) import_->thread.join();
    if (import_->result && *import_->result) import_->result->value().store.reset();
    if (import_->temporary) removeTemporary(import_->storePath);
  }
  if (store_) {
    if (auto r = store_->close(); !r) host_.output(OutputCategory::Important, "GPU store: " + r.error().message + "\n");
  }
}

BackendFeatures GpuBackend::staticFeatures() {
  BackendFeatures f;
  f.gpuTimeline = true;
  f.completions = true;  // the Debug Console's '!' commands, in every session
  return f;
}

// ---- Backend ---------------------------------------------------------------------------------

void GpuBackend::launch(const LaunchSpec&, Reply<void> reply) {
  reply(Error{errors::kUnsupportedRequest, "the GPU backend runs no program", false});
}

void GpuBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  if (set.kind != BreakpointSet::Kind::Source) return unsupported(set, reply);
  std::vector<BreakpointReport> out(set.size());
  for (auto& b : out) b.message = "the GPU backend places no breakpoints";
  reply(std::move(out));
}

void GpuBackend::terminate(bool, Reply<void> reply) { reply({}); }

void GpuBackend::scopes(std::int64_t, Reply<std::vector<ScopeInfo>> reply) {
  // A launch frame is a place in the source, not a live frame: it holds no variables.
  reply(std::vector<ScopeInfo>{});
}

// ---- the store ---------------------------------------------------------------------------------

void GpuBackend::setStorePath(std::string path) { storePath_ = std::move(path); }

Result<cuda::Store*> GpuBackend::store() {
  if (store_) return store_.get();
  bool temporary = storePath_.empty();
  std::string path = storePath_;
  if (temporary) {
    auto t = temporaryStore();
    if (!t) return t.takeError();
    path = *t;
  }
  auto s = cuda::Store::create(path);
  if (!s) {
    if (temporary) removeTemporary(path);
    return s.takeError();
  }
  store_ = std::move(*s);
  storePath_ = path;
  host_.output(OutputCategory::Console,
               "The GPU data of this session goes to " + path +
                   (temporary ? " (a temporary file, kept after the session; name one with \"gpuStore\")\n" : "\n"));
  return store_.get();
}

Result<cuda::Store*> GpuBackend::requireData(const char* what) {
  if (store_) return store_.get();
  if (import_) return Error{errors::kNoGpuData, std::string(what) + ": the trace is still being imported", false};
  return Error{errors::kNoGpuData, std::string(what) + ": " + noData(), false};
}

void GpuBackend::storeChanged() {
  auto now = std::chrono::steady_clock::now();
  if (now - lastAnnounced_ >= kActivityEvery && !announcePending_) return announce();
  if (announcePending_) return;
  announcePending_ = true;
  auto timer = std::make_shared<asio::steady_timer>(io_, lastAnnounced_ + kActivityEvery);
  std::weak_ptr<bool> alive = alive_;
  timer->async_wait([this, alive, timer](const boost::system::error_code&) {
    auto a = alive.lock();
    if (!a || !*a) return;
    announcePending_ = false;
    announce();
  });
}

void GpuBackend::announce() {
  if (!store_) return;
  lastAnnounced_ = std::chrono::steady_clock::now();
  cuda::ActivityCounts c = store_->counts();
  host_.gpuActivity(GpuActivityReport{c.records, c.kernels, c.copies, c.timeSpan.startNs, c.timeSpan.endNs, c.dropped});
}

// ---- launch {"trace"} -----------------------------------------------------------------------------

void GpuBackend::openTrace(const GpuTraceSpec& spec, Reply<json::value> reply) {
  if (import_) return reply(Error{errors::kWrongState, "a trace is being opened in this session already", false});
  if (store_)
    return reply(Error{errors::kWrongState, "this session already holds GPU data (in " + storePath_ + ")", false});
  auto job = std::make_shared<Import>();
  job->spec = spec;
  job->reply = std::move(reply);
  job->storePath = !spec.storePath.empty() ? spec.storePath : storePath_;
  auto format = cuda::detectTraceFormat(spec.path);
  if (!format) return job->reply(format.takeError());
  // A Strata store opens as it is; anything else is imported into the session's store.
  if (*format != cuda::TraceFormat::StrataStore && job->storePath.empty()) {
    auto t = temporaryStore();
    if (!t) return job->reply(t.takeError());
    job->storePath = *t;
    job->temporary = true;
  }
  job->progressId = "gpu-import-" + std::to_string(++progressIds_);
  host_.progress(ProgressReport{ProgressReport::Phase::Start, job->progressId, "Opening GPU trace",
                                basename(spec.path) + " (" + std::string(cuda::traceFormatName(*format)) + ")", 0});
  import_ = job;
  std::weak_ptr<bool> alive = alive_;
  asio::io_context& io = io_;
  job->thread = std::thread([this, job, alive, &io] {
    auto last = std::chrono::steady_clock::now();
    int lastPercent = 0;
    auto progress = [&](std::uint64_t done, std::uint64_t total) {
      if (job->cancel) return false;
      auto now = std::chrono::steady_clock::now();
      int percent = total ? static_cast<int>(std::min<std::uint64_t>(done * 100 / total, 100)) : lastPercent;
      if (percent != lastPercent && now - last >= kProgressEvery) {
        last = now;
        lastPercent = percent;
        asio::post(io, [this, alive, id = job->progressId, percent] {
          if (auto a = alive.lock(); a && *a) host_.progress(ProgressReport{ProgressReport::Phase::Update, id, "", "", percent});
        });
      }
      return true;
    };
    job->result = cuda::openTrace(job->spec.path, job->storePath, progress);
    asio::post(io, [this, alive, job] {
      if (auto a = alive.lock(); a && *a) finishImport(job);
    });
  });
}

void GpuBackend::abandonOpen() {
  if (import_) import_->cancel = true;
}

void GpuBackend::finishImport(const std::shared_ptr<Import>& job) {
  if (job->thread.joinable()) job->thread.join();
  if (import_ == job) import_.reset();
  auto& result = *job->result;
  host_.progress(ProgressReport{ProgressReport::Phase::End, job->progressId, "",
                                job->cancel ? "cancelled" : result ? "done" : "failed", std::nullopt});
  if (job->cancel || !result) {
    // Nothing of it stays: the importer removed what it wrote; a temporary folder goes too.
    bool opened = result.ok();
    if (opened) result->store.reset();
    if (job->temporary) removeTemporary(job->storePath);
    else if (opened && result->report.format != cuda::TraceFormat::StrataStore) std::filesystem::remove(job->storePath);
    return job->reply(job->cancel ? cuda::importCancelled(job->spec.path) : result.takeError());
  }
  cuda::OpenedTrace opened = std::move(*result);
  store_ = std::move(opened.store);
  storePath_ = store_->path();
  cuda::ActivityCounts c = store_->counts();
  const auto& report = opened.report;
  std::string text = "Opened " + job->spec.path + " (" + std::string(cuda::traceFormatName(report.format)) + "): " +
                     std::to_string(c.records) + " records, " + std::to_string(c.kernels) + " kernels, " +
                     std::to_string(c.copies) + " copies";
  if (report.format != cuda::TraceFormat::StrataStore) text += ", from " + std::to_string(report.events) + " events";
  std::uint64_t skipped = 0;
  for (const auto& [why, n] : report.skipped) skipped += n;
  if (skipped)
    text += " (" + std::to_string(skipped) + (skipped == 1 ? " event" : " events") + " of kinds Strata does not keep skipped)";
  text += ".\n";
  if (report.format == cuda::TraceFormat::StrataStore) {
    text += "It is this session's GPU store" +
            std::string(job->spec.storePath.empty() ? "" : " (\"gpuStore\" is not used: a store opens as it is)") + ".\n";
  } else {
    text += "The session's GPU store: " + storePath_ +
            (job->temporary ? " (a temporary file, kept after the session; name one with \"gpuStore\")\n" : "\n");
  }
  host_.output(OutputCategory::Console, text);
  json::object body = cuda::toJson(report).as_object();
  body["store"] = storePath_;
  job->reply(json::value(std::move(body)));
  announce();
}

// ---- queries ----------------------------------------------------------------------------------

void GpuBackend::summary(std::size_t limit, Reply<json::value> reply) {
  if (flushing_) return afterFlush([this, limit, reply] { summary(limit, reply); });
  auto store = requireData("gpuSummary");
  if (!store) return reply(store.takeError());
  auto s = (*store)->summary(limit);
  if (!s) return reply(s.takeError());
  reply(cuda::toJson(*s));
}

void GpuBackend::timeline(const GpuTimelineQuery& q, Reply<json::value> reply) {
  if (flushing_) return afterFlush([this, q, reply] { timeline(q, reply); });
  auto store = requireData("gpuTimeline");
  if (!store) return reply(store.takeError());
  cuda::TimeSpan span = (*store)->counts().timeSpan;
  std::uint64_t start = q.startNs.value_or(span.startNs);
  std::uint64_t end = q.endNs.value_or(std::max(span.endNs, start + 1));
  if (end <= start)
    return reply(Error{errors::kBadArguments,
                       "gpuTimeline: the window ends (" + std::to_string(end) + ") before it starts (" +
                           std::to_string(start) + ")",
                       false});
  auto t = (*store)->timeline(start, end, q.maxItems);
  if (!t) return reply(t.takeError());
  reply(cuda::toJson(*t));
}

void GpuBackend::kernel(std::uint64_t id, Reply<GpuRecordDetail> reply) {
  if (flushing_) return afterFlush([this, id, reply] { kernel(id, reply); });
  auto store = requireData("gpuKernel");
  if (!store) return reply(store.takeError());
  auto d = (*store)->kernel(id);
  if (!d) return reply(d.takeError());
  GpuRecordDetail out;
  out.body = cuda::toJson(*d).as_object();
  // The frames go out as DAP StackFrames (the session adds them); the raw lists are theirs.
  out.body.erase("pythonFrames");
  out.body.erase("nativeFrames");
  out.body.erase("nativeStack");  // the same frames, given below as stackFrames
  if (auto* capture = out.body.if_contains("capture")) {
    capture->as_object().erase("pythonFrames");
    capture->as_object().erase("nativeStack");
  }
  if (auto* backwardOf = out.body.if_contains("backwardOf")) backwardOf->as_object().erase("pythonFrames");
  // Innermost first, merged and folded so the first frame that is neither subtle nor a label is
  // the user's own line: a graph replay's kernel shows where its node was captured, then the
  // replay; a kernel launched by a thread with no Python frame (autograd's engine threads) shows
  // that thread's native frames, then the Python lines of the thread that waited for it; a
  // backward op's kernel in an imported trace shows the Python lines of its forward op.
  const std::string& kernelName = d->name;
  std::vector<gpu::LaunchFrame> frames;
  auto append = [&](const std::vector<cuda::PythonFrame>& python, const std::vector<std::uint64_t>& native,
                    const std::vector<cuda::NativeFrame>& resolved) {
    std::vector<gpu::NativeLaunchFrame> n;
    for (std::size_t i = 0; i < native.size(); ++i) n.push_back(resolveNative(native[i], resolved.empty() ? nullptr : &resolved[i]));
    auto arranged = gpu::arrangeLaunchFrames(python, n, kernelName);
    frames.insert(frames.end(), arranged.begin(), arranged.end());
  };
  auto label = [&](std::string text) {
    gpu::LaunchFrame l;
    l.kind = gpu::LaunchFrame::Kind::Label;
    l.name = std::move(text);
    frames.push_back(std::move(l));
  };
  if (d->capture) {
    append(d->capture->site.python, d->capture->site.native, d->capture->site.nativeFrames);
    label("CUDA graph replayed by " + std::string(d->launch ? d->launch->name : "cudaGraphLaunch") + " here");
    append(d->python, d->native, d->nativeFrames);
  } else if (d->attribution == cuda::SiteAttribution::Caller) {
    append({}, d->native, d->nativeFrames);
    label("launched for thread " + std::to_string(d->callerTid) + ", which waited in " + cuda::waitedInText(d->waitedIn));
    append(d->python, {}, {});
  } else {
    append(d->python, d->native, d->nativeFrames);
  }
  if (d->backwardOf && !d->backwardOf->python.empty()) {
    label(d->backwardOf->backward.name + ": the backward of " + d->backwardOf->forward.name + ", whose forward ran at");
    append(d->backwardOf->python, {}, {});
  }
  for (const gpu::LaunchFrame& f : frames) out.frames.push_back(launchFrame(f));
  reply(std::move(out));
}

// A native launch frame: its function and line from the module's DWARF when the module is
// readable here, else the collector's symbol (its module and offset when it has none).
gpu::NativeLaunchFrame GpuBackend::resolveNative(std::uint64_t pc, const cuda::NativeFrame* resolved) {
  gpu::NativeLaunchFrame f;
  f.pc = pc;
  if (!resolved) return f;
  f.module = resolved->module;
  f.moduleOffset = resolved->elfAddress;
  f.function = resolved->function.empty() ? resolved->symbol : resolved->function;
  if (!resolved->file.empty()) {
    f.file = resolved->file;
    f.line = resolved->line;
  }
  if (resolved->module.empty()) return f;
  auto it = modules_.find(resolved->module);
  if (it == modules_.end()) {
    auto opened = native::symbols::ObjectSymbols::open(resolved->module);
    it = modules_.emplace(resolved->module, opened ? *opened : nullptr).first;
  }
  if (!it->second || resolved->elfAddress == 0) return f;
  // A return address: the call that made it is the byte before.
  const std::uint64_t at = resolved->elfAddress - 1;
  if (auto fn = it->second->functionAt(at)) f.function = fn->name.empty() ? fn->displayName : fn->name;
  if (auto where = it->second->locationForAddress(at); where && !where->file.empty() && where->file[0] == '/') {
    f.file = where->file;
    f.line = where->line;
  }
  return f;
}

FrameInfo GpuBackend::launchFrame(const gpu::LaunchFrame& f) {
  FrameInfo frame;
  frame.id = static_cast<std::int64_t>(++frames_);
  frame.name = f.name;
  frame.presentationHint = f.kind == gpu::LaunchFrame::Kind::Label ? "label" : f.subtle ? "subtle" : "normal";
  if (f.pc) frame.instructionPointerReference = hex(f.pc);
  if (f.kind == gpu::LaunchFrame::Kind::Label || f.kind == gpu::LaunchFrame::Kind::Folded) return frame;
  if (f.kind == gpu::LaunchFrame::Kind::Native && f.file.empty()) return frame;
  SourceInfo src;
  src.name = basename(f.file);
  std::error_code ec;
  if (!f.file.empty() && f.file[0] == '/') {
    src.path = f.file;
    if (!fs::exists(f.file, ec)) src.presentationHint = "deemphasize";  // recorded on another machine
  } else {
    src.presentationHint = "deemphasize";  // "<string>", a frozen module: no file to open
  }
  frame.source = std::move(src);
  frame.line = f.line;
  frame.column = 1;
  return frame;
}

void GpuBackend::exportTrace(const GpuExportQuery& q, Reply<json::value> reply) {
  if (flushing_) return afterFlush([this, q, reply] { exportTrace(q, reply); });
  auto store = requireData("gpuExport");
  if (!store) return reply(store.takeError());
  bool perfetto = q.format == "perfetto";
  std::string path = q.path;
  if (path.empty()) {
    // Beside the store, under a name no file has yet.
    fs::path base = fs::path(storePath_).replace_extension("");
    std::error_code ec;
    for (int i = 1; path.empty() || fs::exists(path, ec); ++i)
      path = base.string() + (i == 1 ? "" : "-" + std::to_string(i)) + (perfetto ? ".pftrace" : ".trace.json");
  }
  cuda::ExportOptions options;
  if (q.startNs || q.endNs) {
    cuda::TimeSpan span = (*store)->counts().timeSpan;
    options.window = cuda::TimeSpan{q.startNs.value_or(span.startNs), q.endNs.value_or(span.endNs + 1)};
  }
  auto r = (*store)->exportTrace(path, perfetto ? cuda::ExportFormat::Perfetto : cuda::ExportFormat::Chrome, options);
  if (!r) return reply(r.takeError());
  json::object body = cuda::toJson(*r).as_object();
  body["format"] = q.format;
  body["path"] = path;
  reply(json::value(std::move(body)));
}

// ---- the Debug Console and live collection ------------------------------------------------------

void GpuBackend::console(const std::string& line, Reply<std::string> reply) {
  std::istringstream in(line);
  std::string first, second;
  in >> first >> second;
  if (first == "gpu" && (second == "start" || second == "stop")) {
    std::string mode = "trace";
    in >> mode;
    auto done = [reply, second, mode](Result<void> r) {
      if (!r) return reply(r.takeError());
      reply(second == "start" ? "GPU collection started (" + mode + ")" : std::string("GPU collection stopped"));
    };
    if (second == "start") {
      if (mode != "trace" && mode != "stacks")
        return reply(Error{errors::kBadArguments, "usage: !gpu start [trace|stacks]", false});
      return start(mode, done);
    }
    return stop(done);
  }
  if (first == "gpu" && second == "crash") {
    if (!lastCrash_) return reply(std::string("No crash has stopped this session's program."));
    return crashContext(lastCrash_->pid, lastCrash_->tid, lastCrash_->stopNs, [reply, pid = lastCrash_->pid](Result<std::string> text) {
      if (text && text->empty()) return reply("Nothing of process " + std::to_string(pid) + "'s GPU work was collected before its crash.");
      reply(std::move(text));
    });
  }
  if (first == "gpu" && second == "profile") {
    std::string kernel, extra;
    std::uint32_t count = 1;
    in >> kernel;
    if (std::string n; in >> n) {
      if (n.empty() || n.size() > 2 || n.find_first_not_of("0123456789") != std::string::npos || std::stoi(n) < 1 ||
          std::stoi(n) > 64)
        return reply(Error{errors::kBadArguments, "usage: !gpu profile NAME [N] (N: launches to measure, 1 to 64)", false});
      count = static_cast<std::uint32_t>(std::stoi(n));
    }
    if (kernel.empty() || (in >> extra))
      return reply(Error{errors::kBadArguments, "usage: !gpu profile NAME [N] (a kernel's name or part of it, N launches, 1 to 64)", false});
    return profile(kernel, count, [reply, kernel, count](Result<json::value> r) {
      if (!r) return reply(r.takeError());
      const std::int64_t processes = r->as_object().at("processes").to_number<std::int64_t>();
      std::string text = "Measuring the next " + std::to_string(count) + (count == 1 ? " launch" : " launches") +
                         " of kernels whose names contain '" + kernel + "' (SM and DRAM throughput, achieved occupancy, "
                         "GPU time) in ";
      text += processes ? std::to_string(processes) + (processes == 1 ? " process" : " processes") + " and any started later"
                        : "the program's processes once they start collecting";
      reply(text + "; each launch is replayed as often as the counters need, and the results come as console lines and "
                   "in !gpu kernel " + kernel + ".");
    });
  }
  if (flushing_) return afterFlush([this, line, reply] { console(line, reply); });
  if (!store_) {
    if (import_) return reply(std::string("The trace is still being imported; ask again when the launch has answered."));
    return reply(std::string("No GPU data in this session yet: ") + kHowToGetData + ".");
  }
  reply(cuda::text::run(*store_, line));
}

void GpuBackend::start(const std::string& mode, Reply<void> reply) {
  if (collection_) return collection_->start(mode, std::move(reply));
  reply(Error{errors::kNoLiveCollection,
              "live GPU collection is not available in this session: this strata-dap has no live collector attached "
              "(open a recorded trace with launch {\"trace\": PATH} instead)",
              false});
}

void GpuBackend::stop(Reply<void> reply) {
  if (collection_) return collection_->stop(std::move(reply));
  reply(Error{errors::kNoLiveCollection, "live GPU collection is not available in this session: nothing collects", false});
}

Result<void> GpuBackend::prepareLaunch(LaunchSpec& spec, const std::string& mode) {
  if (!collection_) return GpuService::prepareLaunch(spec, mode);
  return collection_->prepareLaunch(spec, mode);
}

void GpuBackend::launched(bool ok) {
  if (collection_) collection_->launched(ok);
}

void GpuBackend::programStopped() {
  if (!collection_ || !collection_->active()) return;
  ++flushing_;
  std::weak_ptr<bool> alive = alive_;
  collection_->flush([this, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    if (--flushing_ > 0) return;
    for (auto& work : std::exchange(afterFlush_, {})) work();
  });
}

void GpuBackend::afterFlush(std::function<void()> work) {
  if (!flushing_) return work();
  afterFlush_.push_back(std::move(work));
}

void GpuBackend::crashContext(std::int64_t pid, std::int64_t tid, std::uint64_t stopNs, Reply<std::string> reply) {
  if (flushing_) return afterFlush([this, pid, tid, stopNs, reply] { crashContext(pid, tid, stopNs, reply); });
  lastCrash_ = Crash{pid, tid, stopNs};
  if (!store_ || pid <= 0 || tid <= 0) return reply(std::string());
  reply(cuda::text::crashContext(*store_, static_cast<std::uint32_t>(pid), static_cast<std::uint32_t>(tid), stopNs));
}

void GpuBackend::programEnded(std::function<void()> done) {
  if (!collection_ || !collection_->active()) return done();
  collection_->finish(std::move(done));
}

void GpuBackend::profile(const std::string& kernel, std::uint32_t count, Reply<json::value> reply) {
  if (collection_) return collection_->profile(kernel, count, std::move(reply));
  reply(Error{errors::kNoLiveCollection,
              "live GPU collection is not available in this session: hardware metrics are measured only in a program "
              "collecting GPU activity (launch it with GPU collection on, or run it with strata gpu run --profile "
              "NAME[:N])",
              false});
}

}  // namespace strata::backends
