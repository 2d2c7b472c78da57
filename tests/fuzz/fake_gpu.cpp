// The session fuzzer's GPU backend (see fake_gpu.hpp).
#include "fake_gpu.hpp"

#include <boost/json.hpp>

#include <algorithm>

#include "fake_backend.hpp"

namespace strata::fuzz {

namespace json = boost::json;

namespace {

json::object span(std::uint64_t start, std::uint64_t end) { return json::object{{"startNs", start}, {"endNs", end}}; }

}  // namespace

BackendFeatures FakeGpu::staticFeatures() {
  BackendFeatures f;
  f.gpuTimeline = f.completions = true;
  return f;
}

void FakeGpu::launch(const LaunchSpec&, Reply<void> reply) {
  fail("the session asked the GPU backend to launch a program");
  reply({});
}

void FakeGpu::setBreakpoints(const BreakpointSet&, Reply<std::vector<BreakpointReport>>) {
  fail("the session sent breakpoints to the GPU backend");
}

void FakeGpu::terminate(bool, Reply<void>) { fail("the session asked the GPU backend to terminate a program"); }

void FakeGpu::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  require(given_.count(frameId) == 1, "the session sent the GPU backend a frame id it never gave out");
  reply(std::vector<ScopeInfo>{});
}

void FakeGpu::variables(const VariablesQuery&, Reply<std::vector<ValueInfo>>) {
  fail("the session sent the GPU backend a variables reference (it gives out none)");
}

void FakeGpu::source(std::int64_t, Reply<SourceContent>) {
  fail("the session sent the GPU backend a source reference (it gives out none)");
}

void FakeGpu::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  // Only an evaluate in one of its launch frames comes here (a '!' line never does).
  require(query.frameId && given_.count(*query.frameId) == 1, "an evaluate reached the GPU backend without one of its frames");
  require(query.expression.empty() || query.expression[0] != '!' || query.context != "repl",
          "a Debug Console '!' command reached a backend's evaluate");
  reply(Error{errors::kUnsupportedRequest, "a launch frame holds no variables to evaluate in", false});
}

bool FakeGpu::noData(const char* what, const std::function<void(Error)>& reply) const {
  if (opened_) return false;
  reply(Error{errors::kNoGpuData, std::string(what) + ": no GPU data in this session yet", false});
  return true;
}

void FakeGpu::openTrace(const GpuTraceSpec& spec, Reply<json::value> reply) {
  std::string id = "fake-" + std::to_string(++progress_);
  host_.progress(ProgressReport{ProgressReport::Phase::Start, id, "Opening GPU trace", spec.path, 0});
  host_.progress(ProgressReport{ProgressReport::Phase::Update, id, "", "", 50});
  // A path is all the fake looks at: one with "bad" in it is a malformed trace.
  bool bad = spec.path.find("bad") != std::string::npos;
  host_.progress(ProgressReport{ProgressReport::Phase::End, id, "", bad ? "failed" : "done", std::nullopt});
  if (bad) return reply(Error{errors::kTraceMalformed, spec.path + ": byte 7 (line 1, column 8): malformed", true});
  opened_ = true;
  reply(json::value(json::object{{"format", "kineto-json"}, {"events", 3}, {"records", 3}, {"devices", 1}, {"skipped", json::object{}}}));
  host_.gpuActivity(GpuActivityReport{3, 2, 1, 1000, 5000, 0});
}

void FakeGpu::summary(std::size_t limit, Reply<json::value> reply) {
  if (noData("gpuSummary", reply)) return;
  json::array kernels;
  for (std::size_t i = 0; i < limit && i < 2; ++i)
    kernels.push_back(json::object{{"name", "k" + std::to_string(i)}, {"count", 1}, {"totalNs", 10}, {"avgNs", 10},
                                   {"minNs", 10}, {"maxNs", 10}});
  reply(json::value(json::object{{"kernels", kernels}, {"copies", json::array{}}, {"syncs", json::array{}},
                                 {"timeSpan", span(1000, 5000)}, {"devices", json::array{}}, {"streams", json::array{}},
                                 {"dropped", 0}, {"records", 3}, {"untimed", 0}, {"kernelNames", 2}}));
}

void FakeGpu::timeline(const GpuTimelineQuery& q, Reply<json::value> reply) {
  if (noData("gpuTimeline", reply)) return;
  require(q.maxItems >= 1, "gpuTimeline reached the GPU backend with maxItems 0");
  // Both ends given: the handler has checked them. One given: the other is the data's own.
  require(!q.startNs || !q.endNs || *q.endNs > *q.startNs, "gpuTimeline reached the GPU backend with an empty window");
  std::uint64_t start = q.startNs.value_or(1000), end = q.endNs.value_or(std::max<std::uint64_t>(5000, start + 1));
  if (end <= start) return reply(Error{errors::kBadArguments, "gpuTimeline: the window ends before it starts", false});
  json::array items;
  for (std::uint32_t i = 0; i < q.maxItems && i < 3; ++i)
    items.push_back(json::object{{"track", 1}, {"startNs", start}, {"endNs", end}, {"count", 1}, {"kind", "kernel"},
                                 {"name", "k"}, {"id", i + 1}});
  reply(json::value(json::object{{"window", span(start, end)}, {"maxItems", q.maxItems}, {"merged", false},
                                 {"tracks", json::array{json::object{{"id", 1}, {"kind", "gpu"}, {"pid", 1}, {"name", "GPU 0 stream 7"},
                                                                     {"device", 0}, {"stream", 7}}}},
                                 {"items", items}}));
}

void FakeGpu::kernel(std::uint64_t id, Reply<GpuRecordDetail> reply) {
  if (noData("gpuKernel", [&reply](Error e) { reply(std::move(e)); })) return;
  if (id == 0 || id > 3) return reply(Error{errors::kNoGpuRecord, "gpuKernel: no GPU record with id " + std::to_string(id), true});
  GpuRecordDetail d;
  d.body = json::object{{"id", id}, {"kind", "kernel"}, {"name", "k"}, {"pid", 1}, {"startNs", 1000}, {"endNs", 2000},
                        {"durationNs", 1000}, {"correlation", 1}, {"site", 1}, {"siteKnown", true}};
  FrameInfo py;
  py.id = ++nextFrame_;
  py.name = "train_step";
  py.source = SourceInfo{"train.py", std::string("/src/train.py"), 0, ""};
  py.line = 42;
  py.column = 1;
  FrameInfo native;
  native.id = ++nextFrame_;
  native.name = "0x7f0000001234";
  native.instructionPointerReference = "0x7f0000001234";
  native.presentationHint = "subtle";
  given_.insert(py.id);
  given_.insert(native.id);
  d.frames = {py, native};
  reply(std::move(d));
}

void FakeGpu::exportTrace(const GpuExportQuery& q, Reply<json::value> reply) {
  if (noData("gpuExport", reply)) return;
  reply(json::value(json::object{{"format", q.format}, {"path", q.path.empty() ? "/tmp/fake.trace.json" : q.path},
                                 {"events", 3}, {"bytes", 100}, {"skippedUntimed", 0}, {"extraLanes", 0}}));
}

void FakeGpu::console(const std::string& line, Reply<std::string> reply) {
  require(line.rfind("gpu", 0) == 0 || line.rfind("sql", 0) == 0, "a console line for the GPU backend that is not !gpu or !sql");
  if (!opened_) return reply(std::string("No GPU data in this session yet."));
  reply("fake: " + line);
}

void FakeGpu::start(const std::string&, Reply<void> reply) {
  reply(Error{errors::kNoLiveCollection, "live GPU collection is not available in this session", false});
}

void FakeGpu::stop(Reply<void> reply) {
  reply(Error{errors::kNoLiveCollection, "live GPU collection is not available in this session", false});
}

}  // namespace strata::fuzz
