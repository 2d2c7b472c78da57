// The backend the session fuzzer puts behind a real Session: deterministic answers and events,
// and checks on every id the session hands back to it.
//
// Each call is answered according to a roll derived from the call itself (method, arguments,
// how many calls of that method came before), so the fuzzer steers the fake through the
// requests it mutates: a success with plausible values (now, or posted like a backend on its
// own thread), an error, a reply held back and released after later requests, or one that
// never comes. Successes bring the events a debugger sends (process, thread, stopped,
// continued, exited, breakpoint, module, output). Frames and variables references it gives
// out belong to the stop they were made in; receiving one from an earlier stop, or one it
// never gave out, is a broken property of the session's id tables.
#pragma once

#include <boost/asio.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "strata/error_ids.hpp"

namespace strata::fuzz {

namespace asio = boost::asio;
using namespace strata::backends;

// Prints what broke and traps, so libFuzzer reports the input.
[[noreturn]] void fail(const std::string& what);
inline void require(bool ok, const char* what) {
  if (!ok) fail(what);
}

// What the harness needs to know about replies, per request frame (numbered in stream order):
// whose reply is held back or waits on the client, and whose will never come.
struct Ledger {
  std::optional<std::size_t> frame;  // the request being dispatched right now
  bool attributed = false;           // its first reply-taking backend call was seen
  std::map<std::size_t, int> waiting;
  std::set<std::size_t> dropped;
  bool trace = false;  // STRATA_FUZZ_TRACE: print decisions
  class FakeBackend* live = nullptr;
};

class FakeBackend final : public Backend {
 public:
  FakeBackend(asio::io_context& io, BackendHost& host, Ledger& ledger);
  ~FakeBackend() override;

  // Releases the held-back replies that have waited long enough (all of them with `all`);
  // returns how many it released.
  std::size_t release(bool all);

  std::string name() const override { return "fake"; }
  BackendFeatures features() const override;
  void launch(const LaunchSpec& spec, Reply<void> reply) override;
  void attach(const AttachSpec& spec, Reply<void> reply) override;
  void configurationDone(Reply<void> reply) override;
  void setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) override;
  void setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                 Reply<std::vector<BreakpointReport>> reply) override;
  void setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                          Reply<std::vector<BreakpointReport>> reply) override;
  void dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) override;
  void threads(Reply<std::vector<ThreadInfo>> reply) override;
  void terminate(bool force, Reply<void> reply) override;
  void detach(Reply<void> reply) override;
  void resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) override;
  void step(StepKind kind, const StepOptions& options, Reply<void> reply) override;
  void pause(std::int64_t threadId, Reply<void> reply) override;
  void stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                  Reply<StackPage> reply) override;
  void scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) override;
  void variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) override;
  void evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) override;
  void setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                   Reply<ValueInfo> reply) override;
  void setExpression(const std::string& expression, const std::string& value,
                     std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) override;
  void completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) override;
  void exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) override;
  void source(std::int64_t sourceReference, Reply<SourceContent> reply) override;
  void readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                  Reply<MemoryContents> reply) override;
  void writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                   bool allowPartial, Reply<std::int64_t> reply) override;
  void disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) override;
  void modules(Reply<std::vector<ModuleInfo>> reply) override;
  void loadedSources(Reply<std::vector<SourceInfo>> reply) override;
  void stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) override;

 private:
  // setBreakpoints, by the set's kind.
  void placeSources(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                    Reply<std::vector<BreakpointReport>> reply);
  void placeFunctions(const std::vector<FunctionBreakpointSpec>& breakpoints,
                      Reply<std::vector<BreakpointReport>> reply);
  void placeFilters(const std::vector<ExceptionFilterSpec>& filters,
                    Reply<std::vector<BreakpointReport>> reply);
  struct Held {
    std::function<void()> deliver;
    std::optional<std::size_t> frame;
    int wait = 0;  // frames still to come before it is released
  };

  // A roll for one call: the same call with the same history rolls the same.
  std::uint64_t roll(std::string_view method, std::string_view key);
  // The frame whose reply this call decides, if it is the first reply-taking call in it.
  std::optional<std::size_t> attribute();
  // Answers `reply` with `value` as the roll says; `after` runs once a success is delivered.
  template <class T>
  void answer(std::string_view method, std::string_view key, Result<T> value, Reply<T> reply,
              std::function<void()> after = {});
  void later(std::function<void()> fn);  // posted, skipped once this backend is gone
  void trace(const std::string& text) const;

  // Debuggee events; none once the debuggee exited or was left.
  void started(bool launched);
  void stop(const std::string& reason, std::int64_t threadId, std::uint64_t r);
  void finish(std::uint64_t r);
  std::vector<BreakpointReport> placed(std::string_view method, const std::vector<std::int64_t>& lines,
                                      std::uint64_t r);

  // Ids this backend gives out, and their checks.
  std::int64_t newFrame();
  std::int64_t newRef();
  std::int64_t newSource();
  void checkFrame(std::int64_t id, const char* request);
  void checkRef(std::int64_t id, const char* request);
  SourceInfo someSource(std::uint64_t r);
  ValueInfo someValue(const std::string& text, std::uint64_t r);

  asio::io_context& io_;
  BackendHost& host_;
  Ledger& ledger_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::map<std::string, std::uint64_t, std::less<>> calls_;
  std::vector<Held> held_;
  bool gone_ = false;  // exited or detached: reports nothing more
  std::int64_t stop_ = 0;  // which stop frames and references belong to; the session clears on each change
  std::int64_t next_ = 1;
  std::map<std::int64_t, std::int64_t> frames_, refs_;  // id -> stop
  std::set<std::int64_t> sources_, breakpoints_;
};

}  // namespace strata::fuzz
