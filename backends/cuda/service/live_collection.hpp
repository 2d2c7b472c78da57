// Live GPU collection in a debug session: backends/cuda/live's GpuCollection driven by the
// session's program — the collector in a launched program's environment, a drain at every stop
// and at the end, late start and stop through the debugger that runs the program — with what
// the user must hear said once, as output events.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gpu_backend.hpp"
#include "strata/cuda/live/gpu_collection.hpp"

namespace strata::backends {

class LiveGpuCollection final : public GpuCollectionControl {
 public:
  // `debugger`: the backend that runs the session's program now (null when none). `executable`:
  // the running adapter, beside which a bundle's collector lies.
  LiveGpuCollection(asio::io_context& io, GpuBackend& gpu, std::function<Backend*()> debugger,
                    std::string executable);
  ~LiveGpuCollection() override;

  Result<void> prepareLaunch(LaunchSpec& spec, const std::string& mode) override;
  void launched(bool ok) override;
  bool active() const override { return collection_ != nullptr && !ended_; }
  void flush(std::function<void()> done) override;
  void finish(std::function<void()> done) override;
  void start(const std::string& mode, Reply<void> reply) override;
  void stop(Reply<void> reply) override;
  void profile(const std::string& kernel, std::uint32_t count, Reply<boost::json::value> reply) override;

 private:
  Result<cuda::GpuCollection*> make(cuda::GpuMode mode, const std::string& command);
  cuda::GpuCallbacks callbacks();
  // The program a late start or stop goes to: one command at a time, while a program runs.
  Result<Backend*> programToCommand();
  // Sends it; `done` finishes a command the collector took, and one the program cannot take is
  // told what to do `instead`.
  void command(Backend& program, GpuCollectorCommand c, std::string instead, std::function<void(Reply<void>)> done,
               Reply<void> reply);

  asio::io_context& io_;
  GpuBackend& gpu_;
  std::function<Backend*()> debugger_;
  std::string executable_;
  std::unique_ptr<cuda::GpuCollection> collection_;
  cuda::GpuMode mode_ = cuda::GpuMode::Off;  // what the collectors record while collecting_
  bool collecting_ = false;  // the program's collectors record (launch with trace/stacks, or started late)
  bool ended_ = false;       // the program ended: finish() ran
  bool busy_ = false;        // a late start or stop is on its way to the program
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace strata::backends
