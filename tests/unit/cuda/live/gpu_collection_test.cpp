// GpuCollection against real rings written by the collector's producer half (RingWriter and
// Publisher, as libstrata_cupti.so writes them) into a real store: records and names, launch
// sites with resolved frames, drops, CUDA errors, status sentences, stops, exits, no ring.
#include <doctest/doctest.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "publisher.hpp"
#include "ring_writer.hpp"
#include "strata/cuda/collector/futex.hpp"
#include "strata/cuda/live/gpu_collection.hpp"

using namespace strata::cuda;
using namespace strata::cuda::collector;
namespace asio = boost::asio;
namespace fs = std::filesystem;

// A function whose address stands for a launching call in this binary (its first line).
const int kLaunchSiteLine = __LINE__ + 1;
__attribute__((noinline)) int liveTestLaunchSite(int x) {
  return x * 3 + 1;
}

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = "/tmp/strata-gpu-live-test-XXXXXX";
    REQUIRE(mkdtemp(t.data()));
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string selfPath() { return fs::read_symlink("/proc/self/exe").string(); }

// liveTestLaunchSite's address as the collector would send it: a return address one byte into
// the function, with its module and ELF address.
NativeFrameText launchFrame() {
  auto pc = reinterpret_cast<std::uint64_t>(&liveTestLaunchSite) + 1;
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(pc), &info) != 0);
  return NativeFrameText{pc, pc - reinterpret_cast<std::uint64_t>(info.dli_fbase), selfPath(), "liveTestLaunchSite"};
}

// One session: a store, a collection on an io_context, and everything its callbacks said.
struct Session {
  TempDir dir;
  asio::io_context io;
  std::unique_ptr<Store> store;
  std::unique_ptr<GpuCollection> gpu;
  std::vector<GpuActivity> activity;
  std::vector<GpuError> errors;
  std::vector<GpuNote> notes;

  explicit Session(GpuCollectionOptions options = {}) {
    auto s = Store::create(dir.path + "/session.strata");
    REQUIRE(s.ok());
    store = std::move(*s);
    if (options.dir.empty()) options.dir = dir.path + "/rings";
    if (options.session.empty()) options.session = "s1";
    GpuCallbacks cb;
    cb.activity = [this](const GpuActivity& a) { activity.push_back(a); };
    cb.error = [this](const GpuError& e) { errors.push_back(e); };
    cb.note = [this](const GpuNote& n) { notes.push_back(n); };
    auto g = GpuCollection::create(io.get_executor(), *store, options, cb);
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message));
    gpu = std::move(*g);
  }
  std::size_t notesOf(GpuNote::Kind kind) const {
    return std::count_if(notes.begin(), notes.end(), [&](const GpuNote& n) { return n.kind == kind; });
  }
  const GpuNote* note(GpuNote::Kind kind) const {
    for (const auto& n : notes)
      if (n.kind == kind) return &n;
    return nullptr;
  }
  // Runs the io_context until `flag` is set (or `bound` passes: a hang guard).
  void runUntil(const bool& flag, std::chrono::seconds bound = std::chrono::seconds(5)) {
    const auto end = std::chrono::steady_clock::now() + bound;
    while (!flag && std::chrono::steady_clock::now() < end) {
      io.restart();
      io.run_for(std::chrono::milliseconds(5));
    }
    REQUIRE(flag);
  }
};

// The collector's producer half in this process, writing into the session's directory.
struct Producer {
  ring::RingWriter ring;
  LaunchJoin join{1 << 10};
  std::unique_ptr<Publisher> pub;
  Producer(const std::string& dir, const std::string& session, std::size_t bytes = 1 << 20) {
    REQUIRE(ring.create(dir, session, bytes, ring::Mode::Stacks).ok());
    pub = std::make_unique<Publisher>(ring, static_cast<std::uint32_t>(getpid()), &join);
    pub->expectSites(true);
  }
  void kernels(const char* name, int n, std::uint32_t firstCorrelation, std::uint64_t start = 1'000'000) {
    std::vector<ParsedActivity> items(n);
    for (int i = 0; i < n; ++i) {
      auto& p = items[i];
      p.what = ParsedActivity::What::Record;
      p.record.kind = RecordKind::Kernel;
      p.record.correlation = firstCorrelation + i;
      p.record.start = start + i * 1000;
      p.record.end = p.record.start + 500;
      p.record.stream = 7;
      p.record.grid[0] = 64;
      p.record.block[0] = 256;
      p.text = name;
    }
    pub->publish(items.data(), items.size());
  }
};

}  // namespace

TEST_CASE("launch environment: the collector, its CUPTI for NVTX, and the session's settings") {
  TempDir files;
  const std::string collector = files.path + "/libstrata_cupti.so";
  std::ofstream(collector) << "x";
  std::ofstream(files.path + "/libcupti.so.13") << "x";
  GpuCollectionOptions o;
  o.mode = GpuMode::Stacks;
  o.collector = collector;
  o.period = std::chrono::milliseconds(50);
  Session s(o);
  auto env = s.gpu->environment();
  std::map<std::string, std::string> m(env.begin(), env.end());
  CHECK(m["CUDA_INJECTION64_PATH"] == collector);
  CHECK(m["STRATA_GPU_MODE"] == "stacks");
  CHECK(m["STRATA_GPU_DIR"] == s.dir.path + "/rings");
  CHECK(fs::is_directory(s.dir.path + "/rings"));
  CHECK(m["STRATA_GPU_SESSION"] == "s1");
  CHECK(m["STRATA_GPU_FLUSH_MS"] == "50");
  CHECK(m["NVTX_INJECTION64_PATH"] == files.path + "/libcupti.so.13");  // the one beside the collector

  auto late = s.gpu->lateStart();
  REQUIRE(late.ok());
  CHECK(late->collector == collector);
  CHECK(late->config == "mode=stacks dir=" + s.dir.path + "/rings session=s1 flush_ms=50");
  CHECK(late->agentArguments().at("config").as_string() == late->config);
  CHECK(late->pythonStart() == "import ctypes as _c; _strata_gpu = _c.CDLL(\"" + collector +
                                   "\"); _strata_gpu_result = _strata_gpu.strata_gpu_start(\"" + late->config +
                                   "\".encode())");
  s.gpu->start();
  CHECK(s.notes.empty());
}

TEST_CASE("a missing collector: no environment, one note saying where Strata looked, the program runs") {
  GpuCollectionOptions o;
  o.collector = "/no/such/libstrata_cupti.so";
  Session s(o);
  CHECK(s.gpu->environment().empty());
  CHECK_FALSE(s.gpu->lateStart().ok());
  CHECK(s.gpu->lateStart().error().id == strata::errors::kGpuCollectorMissing);
  s.gpu->start();
  bool done = false;
  s.gpu->finish([&] { done = true; });
  s.runUntil(done);
  REQUIRE(s.notes.size() == 1);  // said once: no second note that no ring appeared
  CHECK(s.notes[0].kind == GpuNote::Kind::NoCollector);
  CHECK(s.notes[0].problem);
  CHECK(s.notes[0].text.find("/no/such/libstrata_cupti.so") != std::string::npos);
}

TEST_CASE("the collector is found through STRATA_GPU_COLLECTOR, then beside the executable") {
  TempDir files;
  fs::create_directories(files.path + "/bin");
  std::ofstream(files.path + "/bin/libstrata_cupti.so") << "x";
  std::ofstream(files.path + "/bin/libcupti.so.13") << "x";
  unsetenv("STRATA_GPU_COLLECTOR");
  auto f = locateCollector(files.path + "/bin/strata-dap");
  CHECK(f.collector == files.path + "/bin/libstrata_cupti.so");
  CHECK(f.cupti == files.path + "/bin/libcupti.so.13");
  std::ofstream(files.path + "/other.so") << "x";
  setenv("STRATA_GPU_COLLECTOR", (files.path + "/other.so").c_str(), 1);
  CHECK(locateCollector(files.path + "/bin/strata-dap").collector == files.path + "/other.so");
  unsetenv("STRATA_GPU_COLLECTOR");
  fs::create_directories(files.path + "/prefix/bin");
  fs::create_directories(files.path + "/prefix/lib/strata");
  std::ofstream(files.path + "/prefix/lib/strata/libstrata_cupti.so") << "x";
  CHECK(locateCollector(files.path + "/prefix/bin/strata").collector == files.path + "/prefix/lib/strata/libstrata_cupti.so");
}

TEST_CASE("records, names and launch sites with their frames reach the store; activity is reported") {
  Session s;
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  CapturedSite site;
  site.id = 1;
  site.cbid = 211;
  site.domain = 2;
  site.api = "cudaLaunchKernel";
  site.python = {{"train_step", "/src/train.py", 42}, {"main", "/src/train.py", 90}};
  site.native = {launchFrame()};
  p.pub->addSite(site);
  for (std::uint32_t c = 100; c < 110; ++c) p.join.set(c, 1);
  p.kernels("_Z6matmulPfS_S_i", 10, 100);
  p.kernels("_Z4fillPii", 5, 200, 2'000'000);
  REQUIRE(p.pub->flushPending());

  s.gpu->poll();
  REQUIRE(s.activity.size() == 1);
  CHECK(s.activity[0].newRecords == 15);
  CHECK(s.activity[0].totals.kernels == 15);
  CHECK(s.activity[0].totals.timeSpan.startNs == 1'000'000);
  CHECK(s.activity[0].totals.timeSpan.endNs == 2'004'500);
  CHECK(s.activity[0].newDropped == 0);
  s.gpu->poll();
  CHECK(s.activity.size() == 1);  // nothing new, nothing said

  auto sum = s.store->summary(10);
  REQUIRE(sum.ok());
  REQUIRE(sum->kernels.size() == 2);
  CHECK(sum->kernels[0].name == "matmul(float*, float*, float*, int)");  // by total time
  CHECK(sum->kernels[0].count == 10);
  CHECK(sum->kernels[1].name == "fill(int*, int)");

  auto ids = s.store->sql("SELECT id FROM kernels WHERE name LIKE 'matmul%' LIMIT 1", 1);
  REQUIRE(ids.ok());
  REQUIRE(ids->rows.size() == 1);
  auto k = s.store->kernel(static_cast<std::uint64_t>(std::get<std::int64_t>(ids->rows[0][0])));
  REQUIRE(k.ok());
  CHECK(k->siteKnown);
  REQUIRE(k->python.size() == 2);
  CHECK(k->python[0].function == "train_step");
  CHECK(k->python[0].line == 42);
  REQUIRE(k->nativeFrames.size() == 1);
  CHECK(k->nativeFrames[0].function == "liveTestLaunchSite(int)");
  CHECK(fs::path(k->nativeFrames[0].file).filename() == "gpu_collection_test.cpp");
  CHECK(k->nativeFrames[0].line == kLaunchSiteLine);
  CHECK(k->nativeFrames[0].module == selfPath());
}

TEST_CASE("the status of each collector is said once; problems say why") {
  Session s;
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  p.ring.setStatus(ring::State::Collecting, "collecting (stacks)");
  s.gpu->poll();
  s.gpu->poll();
  REQUIRE(s.notesOf(GpuNote::Kind::Collecting) == 1);
  CHECK_FALSE(s.note(GpuNote::Kind::Collecting)->problem);
  CHECK(s.note(GpuNote::Kind::Collecting)->text == "GPU collection (stacks) in process " + std::to_string(getpid()));

  // A second process: CUPTI held by another client.
  Session t;
  t.gpu->start();
  Producer q(t.dir.path + "/rings", "s1");
  q.ring.setStatus(ring::State::StoodAside,
                   "CUPTI is held by nsys: CUDA 13.0 allows one CUPTI client per process, so Strata stands aside");
  t.gpu->poll();
  t.gpu->poll();
  REQUIRE(t.notesOf(GpuNote::Kind::StoodAside) == 1);
  CHECK(t.note(GpuNote::Kind::StoodAside)->problem);
  CHECK(t.note(GpuNote::Kind::StoodAside)->text.starts_with("no GPU collection in process "));
  CHECK(t.note(GpuNote::Kind::StoodAside)->text.find("CUPTI is held by nsys") != std::string::npos);
}

TEST_CASE("a failed start (no GPU) is said once, with the collector's reason") {
  GpuCollectionOptions o;
  o.exitGrace = std::chrono::milliseconds(50);  // this process is the producer: it never goes away
  Session s(o);
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  p.ring.setStatus(ring::State::Failed,
                   "cuptiSubscribe_v2 failed: CUPTI_ERROR_UNKNOWN (999) (is there a GPU and a working CUDA driver?)");
  bool done = false;
  s.gpu->poll();
  s.gpu->poll();
  CHECK(s.notesOf(GpuNote::Kind::Failed) == 1);
  CHECK(s.note(GpuNote::Kind::Failed)->text.find("CUPTI_ERROR_UNKNOWN (999)") != std::string::npos);
  s.gpu->finish([&] { done = true; });
  s.runUntil(done);
  CHECK(s.notesOf(GpuNote::Kind::Failed) == 1);
  CHECK(s.notesOf(GpuNote::Kind::NoRing) == 0);  // a ring appeared: its reason was the one to give
}

TEST_CASE("dropped records are counted exactly, stored, reported in activity and said once") {
  Session s;
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1", 1 << 20);
  // More kernels than a 1 MiB ring holds, with no reader draining it meanwhile.
  const int total = 12000;
  p.kernels("_Z1kv", total, 1);
  REQUIRE(p.pub->flushPending());
  const auto header = p.ring.header();
  const std::uint64_t dropped = header->droppedRecords;
  REQUIRE(dropped > 0);
  p.ring.addCuptiDropped(7);
  s.gpu->poll();
  REQUIRE(s.activity.size() == 1);
  CHECK(s.activity[0].newRecords == total - dropped);
  CHECK(s.activity[0].newDropped == dropped + 7);
  CHECK(s.activity[0].totals.dropped == dropped + 7);
  CHECK(s.store->counts().dropped == dropped + 7);
  // More drops later: the delta only; the note is not repeated.
  p.ring.addCuptiDropped(3);
  s.gpu->poll();
  REQUIRE(s.activity.size() == 2);
  CHECK(s.activity[1].newDropped == 3);
  CHECK(s.activity[1].totals.dropped == dropped + 10);
  CHECK(s.notesOf(GpuNote::Kind::Dropped) == 1);
  CHECK(s.note(GpuNote::Kind::Dropped)->text.find(std::to_string(dropped) + " found the ring full") != std::string::npos);
  auto sum = s.store->summary(1);
  REQUIRE(sum.ok());
  CHECK(sum->dropped == dropped + 10);
}

TEST_CASE("a sticky CUDA error is delivered with the API, the error, the last kernel and the caller's line") {
  Session s;
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  CapturedSite site;
  site.id = 1;
  site.api = "cudaLaunchKernel";
  site.native = {launchFrame()};
  p.pub->addSite(site);
  p.join.set(12, 1);
  p.kernels("_Z4fillPii", 1, 12);
  CudaErrorInfo e;
  e.result = 700;
  e.domain = 2;
  e.cbid = 165;
  e.tid = 99;
  e.api = "cudaDeviceSynchronize";
  e.error = "cudaErrorIllegalAddress";
  e.lastKernel = "_Z4fillPii";
  e.lastCorrelation = 12;
  e.lastSite = 1;
  e.time = 5'000'000;
  const NativeFrameText caller = launchFrame();
  e.callerModule = caller.module;
  e.callerElfAddress = caller.elfAddress;
  p.pub->addCudaError(e);
  REQUIRE(p.pub->flushPending());
  s.gpu->poll();
  REQUIRE(s.errors.size() == 1);
  const GpuError& g = s.errors[0];
  CHECK(g.pid == static_cast<std::uint32_t>(getpid()));
  CHECK(g.tid == 99);
  CHECK(g.api == "cudaDeviceSynchronize");
  CHECK(g.error == "cudaErrorIllegalAddress");
  CHECK(g.result == 700);
  CHECK(g.lastKernel == "fill(int*, int)");
  CHECK(g.lastCorrelation == 12);
  REQUIRE(g.lastLaunchNative.size() == 1);
  CHECK(g.lastLaunchNative[0].line == kLaunchSiteLine);
  CHECK(g.caller.function == "liveTestLaunchSite(int)");
  CHECK(g.caller.line == kLaunchSiteLine);
  CHECK(g.timeNs == 5'000'000);
  CHECK(g.message.starts_with("cudaErrorIllegalAddress (700) returned by cudaDeviceSynchronize called from "
                              "liveTestLaunchSite(int) at gpu_collection_test.cpp:" +
                              std::to_string(kLaunchSiteLine)));
  CHECK(g.message.find("the last kernel this thread launched: fill(int*, int)") != std::string::npos);
  // The failed kernel is in the store when the error is delivered.
  CHECK(s.store->counts().kernels == 1);
  s.gpu->poll();
  CHECK(s.errors.size() == 1);
}

TEST_CASE("a profile request reaches every ring, and the answers are stored, shown on their launch and said") {
  Session s;
  s.gpu->start();
  CHECK(s.gpu->requestProfile("vector_add", 2).value() == 0);  // nothing collects yet
  Producer p(s.dir.path + "/rings", "s1");
  // The ring that appears later gets the standing request when it is opened.
  CHECK(s.gpu->requestProfile("vector_add", 2).value() == 1);
  std::string kernel;
  std::uint32_t count = 0, seq = 0;
  REQUIRE(p.ring.takeProfileRequest(kernel, count, seq));
  CHECK(kernel == "vector_add");
  CHECK(count == 2);
  CHECK(s.gpu->requestProfile("", 2).error().id == strata::errors::kBadArguments);
  CHECK(s.gpu->requestProfile("vector_add", 65).error().message.find("1 to 64") != std::string::npos);

  p.kernels("_Z10vector_addPfi", 2, 30);
  KernelMetricsInfo m;
  m.correlation = 31;
  m.request = seq;
  m.remaining = 1;
  m.passes = 8;
  m.kernel = "_Z10vector_addPfi";
  m.smThroughputPct = 50.5;
  m.dramThroughputPct = 90.25;
  m.achievedOccupancyPct = 75;
  m.durationNs = 1500;
  p.pub->addKernelMetrics(m);
  KernelMetricsInfo refused;
  refused.correlation = 30;
  refused.request = seq;
  refused.kernel = m.kernel;
  refused.result = 35;
  refused.error = "no hardware metrics in process 1: restricted; tracing goes on";
  p.pub->addKernelMetrics(refused);
  REQUIRE(p.pub->flushPending());
  s.gpu->poll();
  REQUIRE(s.notesOf(GpuNote::Kind::Profile) == 2);
  const GpuNote& said = s.notes[s.notes.size() - 2];
  CHECK_FALSE(said.problem);
  CHECK(said.text == "hardware metrics of vector_add(float*, int) (process " + std::to_string(getpid()) +
                         ", correlation 31): SM throughput 50.5%, DRAM throughput 90.2%, achieved occupancy 75.0%, "
                         "GPU time 1500 ns; 1 more to measure");
  CHECK(s.notes.back().problem);
  CHECK(s.notes.back().text == refused.error);

  auto rows = s.store->kernelMetrics();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].correlation == 31);
  CHECK((*rows)[0].smThroughputPct == 50.5);
  CHECK((*rows)[1].achievedOccupancyPct == std::nullopt);
  CHECK((*rows)[1].result == 35);
  // Each launch's detail carries its own answer.
  auto ids = s.store->sql("SELECT id, correlation FROM kernels ORDER BY correlation", 10);
  REQUIRE(ids.ok());
  REQUIRE(ids->rows.size() == 2);
  auto first = s.store->kernel(static_cast<std::uint64_t>(std::get<std::int64_t>(ids->rows[0][0])));
  auto second = s.store->kernel(static_cast<std::uint64_t>(std::get<std::int64_t>(ids->rows[1][0])));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE(first->metrics);
  CHECK(first->metrics->error == refused.error);
  REQUIRE(second->metrics);
  CHECK(second->metrics->dramThroughputPct == 90.25);
  CHECK(second->metrics->passes == 8);
}

TEST_CASE("a profile in the launch environment: STRATA_GPU_PROFILE, checked first") {
  GpuCollectionOptions o;
  o.collector = selfPath();  // any file: only the environment is looked at
  o.profile = "ns::gemm:3";
  Session s(o);
  auto env = s.gpu->environment();
  CHECK(std::find(env.begin(), env.end(), std::pair<std::string, std::string>{"STRATA_GPU_PROFILE", "ns::gemm:3"}) != env.end());
  std::string kernel;
  unsigned count = 0;
  REQUIRE(parseProfile("ns::gemm:3", kernel, count).ok());
  CHECK(kernel == "ns::gemm");
  CHECK(count == 3);
  CHECK_FALSE(parseProfile("gemm:0", kernel, count).ok());
  CHECK_FALSE(parseProfile("two words", kernel, count).ok());
  asio::io_context io;
  auto store = Store::create(s.dir.path + "/other.strata");
  REQUIRE(store.ok());
  GpuCollectionOptions bad;
  bad.dir = s.dir.path + "/r2";
  bad.profile = "gemm:99";
  auto refused = GpuCollection::create(io.get_executor(), **store, bad, {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("1 to 64") != std::string::npos);
}

TEST_CASE("flushAtStop: the collector's flush thread answers, and what it flushed is in the store") {
  GpuCollectionOptions o;
  // A bound the test never reaches: `done` can only come from the flush thread's answer, not
  // from the bound running out (runUntil's limit below is the hang guard).
  o.stopFlush = std::chrono::hours(1);
  Session s(o);
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  p.ring.setStatus(ring::State::Collecting, "collecting (stacks)");
  s.gpu->poll();
  // The collector's flush thread: waits for a request, "flushes" one kernel, answers.
  std::atomic<bool> quit{false};
  const std::uint32_t before = p.ring.flushRequested();  // read here: the request may come before the thread runs
  std::thread flusher([&] {
    std::uint32_t seen = before;
    while (!quit) {
      ring::futexWait(p.ring.flushRequestWord(), seen, 5'000'000);
      const std::uint32_t now = p.ring.flushRequested();
      if (now == seen) continue;
      seen = now;
      p.kernels("_Z7flushedv", 1, 500);
      p.pub->flushPending();
      p.ring.markFlushed(now);
    }
  });
  bool done = false;
  s.gpu->flushAtStop([&] { done = true; });
  s.runUntil(done, std::chrono::seconds(60));  // answered: the bound is an hour
  quit = true;
  flusher.join();
  CHECK(s.store->counts().kernels == 1);
  REQUIRE_FALSE(s.activity.empty());
  CHECK(s.activity.back().totals.kernels == 1);
}

TEST_CASE("flushAtStop does not wait past its bound for a collector that cannot answer") {
  GpuCollectionOptions o;
  o.stopFlush = std::chrono::milliseconds(30);
  Session s(o);
  s.gpu->start();
  Producer p(s.dir.path + "/rings", "s1");
  p.ring.setStatus(ring::State::Collecting, "collecting (trace)");
  p.kernels("_Z1kv", 3, 1);
  REQUIRE(p.pub->flushPending());
  bool done = false;
  s.gpu->flushAtStop([&] { done = true; });
  s.runUntil(done);
  CHECK(s.store->counts().kernels == 3);
}

TEST_CASE("the timer drains rings of a child process that exits; finish says nothing more") {
  GpuCollectionOptions o;
  o.period = std::chrono::milliseconds(10);
  Session s(o);
  s.gpu->start();
  const std::string dir = s.dir.path + "/rings";
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    {
      Producer p(dir, "s1");
      p.ring.setStatus(ring::State::Collecting, "collecting (stacks)");
      p.kernels("_Z4stepv", 40, 1);
      p.pub->flushPending();
    }
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  // Rings of another session in the same directory are left alone.
  { Producer other(dir, "someone-else"); other.kernels("_Z5otherv", 4, 1); other.pub->flushPending(); }
  bool done = false;
  s.gpu->finish([&] { done = true; });
  s.runUntil(done);
  CHECK(s.store->counts().kernels == 40);
  CHECK(s.notesOf(GpuNote::Kind::Collecting) == 1);
  CHECK(s.note(GpuNote::Kind::Collecting)->pid == static_cast<std::uint32_t>(child));
  CHECK(s.notesOf(GpuNote::Kind::NoRing) == 0);
  CHECK(s.gpu->sawRing());
}

TEST_CASE("a program that never used CUDA leaves no ring: said once, at exit, with the reason") {
  Session s;
  s.gpu->start();
  s.gpu->poll();
  CHECK(s.notes.empty());
  bool done = false;
  s.gpu->finish([&] { done = true; });
  s.runUntil(done);
  bool again = false;
  s.gpu->finish([&] { again = true; });
  s.runUntil(again);
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].kind == GpuNote::Kind::NoRing);
  CHECK(s.notes[0].problem);
  CHECK(s.notes[0].text.starts_with("no GPU collection happened: "));
  CHECK(s.notes[0].text.find(s.dir.path + "/rings") != std::string::npos);
  if (!machineGpuProblem().empty()) CHECK(s.notes[0].text.find("no NVIDIA driver") != std::string::npos);
  CHECK_FALSE(s.gpu->sawRing());
}

TEST_CASE("a directory made for the rings is removed with them") {
  TempDir keep;
  auto store = Store::create(keep.path + "/x.strata");
  REQUIRE(store.ok());
  asio::io_context io;
  std::string dir;
  {
    auto g = GpuCollection::create(io.get_executor(), **store, {}, {});
    REQUIRE(g.ok());
    dir = (*g)->dir();
    CHECK(fs::is_directory(dir));
    CHECK((*g)->session().size() == 16);
    Producer p(dir, (*g)->session());
    p.kernels("_Z1kv", 1, 1);
    p.pub->flushPending();
    (*g)->poll();
    CHECK((*store)->counts().kernels == 1);
  }
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("modes parse by name") {
  CHECK(*parseGpuMode("stacks") == GpuMode::Stacks);
  CHECK(*parseGpuMode("trace") == GpuMode::Trace);
  CHECK(*parseGpuMode("off") == GpuMode::Off);
  auto bad = parseGpuMode("full");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "GPU mode 'full': expected off, trace or stacks");
}
