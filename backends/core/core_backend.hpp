// launch {"coreFile"}: a core file as a debug session. Nothing runs: the session stops at once
// on the thread that took the fatal signal, with every thread's merged Python + native stack
// (native frames unwound from the saved registers, Python frames read from the core's memory),
// native locals and registers from DWARF, Python locals, readMemory, disassemble and read-only
// evaluate. continue, step and writes answer that a core does not run.
#pragma once

#include <map>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "backends/backend.hpp"
#include "strata/stacks/core_process.hpp"

namespace strata::native::symbols {
class Disassembler;
struct FrameContext;
struct Value;
}  // namespace strata::native::symbols

namespace strata::backends {

class CoreBackend : public Backend {
 public:
  CoreBackend(boost::asio::io_context& io, BackendHost& host);
  ~CoreBackend() override;
  std::string name() const override { return "core file"; }
  BackendFeatures features() const override;

  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) override;
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                  Reply<MemoryContents> reply) override;
  void writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                   bool allowPartial, Reply<std::int64_t> reply) override;
  void disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) override;
  void modules(Reply<std::vector<ModuleInfo>> reply) override;

  struct Frame;
  struct Handle;

 private:
  Result<std::vector<FrameInfo>> mergedStack(std::int64_t threadId);
  Result<std::shared_ptr<const native::symbols::FrameContext>> contextOf(std::int64_t frameId);
  ValueInfo describe(const native::symbols::Value& value, std::int64_t frameId);
  std::int64_t crashingThread() const;
  Error cannotRun(const char* what) const;

  boost::asio::io_context& io_;
  BackendHost& host_;
  std::unique_ptr<stacks::CoreProcess> process_;
  std::map<std::int64_t, std::vector<FrameInfo>> merged_;
  std::map<std::int64_t, std::unique_ptr<Frame>> frames_;
  std::map<std::int64_t, std::unique_ptr<Handle>> handles_;
  std::int64_t nextFrame_ = 1, nextHandle_ = 1;
  std::unique_ptr<native::symbols::Disassembler> disassembler_;
  bool ended_ = false;
};

}  // namespace strata::backends
