// The session fuzzer's GPU backend, beside the fake debugger: it answers every GPU request at
// once with a body of the schema's shape, sends progress and gpuActivity events when a trace
// opens, and checks that every frame id the session routes back to it is one it gave out
// (gpuKernel's launch frames), and that the session sends it no variables reference or source
// reference, since it gives out none.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "backends/backend.hpp"
#include "backends/gpu.hpp"

namespace strata::fuzz {

using namespace strata::backends;

class FakeGpu final : public Backend, public GpuService {
 public:
  explicit FakeGpu(BackendHost& host) : host_(host) {}

  static BackendFeatures staticFeatures();
  std::string name() const override { return "GPU"; }
  BackendFeatures features() const override { return staticFeatures(); }
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override { reply({}); }
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override { reply(std::vector<ThreadInfo>{}); }
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override { reply({}); }
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void source(std::int64_t sourceReference, Reply<SourceContent> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  GpuService* gpu() override { return this; }

  void setStorePath(std::string path) override { storePath_ = std::move(path); }
  bool hasData() const override { return opened_; }
  void openTrace(const GpuTraceSpec& spec, Reply<boost::json::value> reply) override;
  void abandonOpen() override {}
  bool opening() const override { return false; }
  void summary(std::size_t limit, Reply<boost::json::value> reply) override;
  void timeline(const GpuTimelineQuery& query, Reply<boost::json::value> reply) override;
  void kernel(std::uint64_t id, Reply<GpuRecordDetail> reply) override;
  void exportTrace(const GpuExportQuery& query, Reply<boost::json::value> reply) override;
  void console(const std::string& line, Reply<std::string> reply) override;
  void start(const std::string& mode, Reply<void> reply) override;
  void stop(Reply<void> reply) override;

 private:
  bool noData(const char* what, const std::function<void(Error)>& reply) const;

  BackendHost& host_;
  std::string storePath_;
  bool opened_ = false;
  std::int64_t nextFrame_ = 0;
  std::set<std::int64_t> given_;
  int progress_ = 0;
};

}  // namespace strata::fuzz
