// The session fuzzer's fake backend: rolls, replies, events and id checks (see fake_backend.hpp).
#include "fake_backend.hpp"

#include <algorithm>
#include <iterator>
#include <cstdio>

namespace strata::fuzz {

void fail(const std::string& what) {
  std::fprintf(stderr, "session fuzzer: broken property: %s\n", what.c_str());
  __builtin_trap();
}

namespace {

std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

std::string keyOf(std::initializer_list<std::int64_t> numbers) {
  std::string k;
  for (auto n : numbers) k += std::to_string(n) + ",";
  return k;
}

// Bytes a debuggee might print: text, sometimes cut in the middle of a UTF-8 sequence or
// not UTF-8 at all, since output events carry whatever the program wrote.
std::string someOutput(std::uint64_t r) {
  static const char* texts[] = {"hello\n", "line without end", "\xc3\xa9t\xc3\xa9\n", "\xe2\x82", "\xff\xfe bad\n",
                                "tab\there \"quoted\" \\ back\n", ""};
  return std::string(texts[r % 7]) + (r & 0x100 ? "\x1b[31mred\x1b[0m\n" : "");
}

}  // namespace

FakeBackend::FakeBackend(asio::io_context& io, BackendHost& host, Ledger& ledger)
    : io_(io), host_(host), ledger_(ledger) {
  ledger_.live = this;
}

FakeBackend::~FakeBackend() {
  *alive_ = false;
  if (ledger_.live == this) ledger_.live = nullptr;
}

void FakeBackend::trace(const std::string& text) const {
  if (ledger_.trace) std::fprintf(stderr, "   fake: %s\n", text.c_str());
}

std::uint64_t FakeBackend::roll(std::string_view method, std::string_view key) {
  auto& n = calls_[std::string(method)];
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  };
  add(method);
  add(key);
  add(std::to_string(n++));
  return mix(h);
}

std::optional<std::size_t> FakeBackend::attribute() {
  if (!ledger_.frame || ledger_.attributed) return std::nullopt;
  ledger_.attributed = true;
  return ledger_.frame;
}

void FakeBackend::later(std::function<void()> fn) {
  std::weak_ptr<bool> alive = alive_;
  asio::post(io_, [alive, fn = std::move(fn)] {
    if (alive.lock()) fn();
  });
}

template <class T>
void FakeBackend::answer(std::string_view method, std::string_view key, Result<T> value, Reply<T> reply,
                         std::function<void()> after) {
  std::uint64_t r = roll(method, key);
  auto frame = attribute();
  unsigned mode = r & 15;
  if (mode == 10 || mode == 11)
  {
    static constexpr ErrorId refusals[] = {errors::kUnsupportedRequest, errors::kBadArguments,
                                           errors::kNotStopped,         errors::kUnknownFrame,
                                           errors::kUnknownReference,   errors::kAgentRefused};
    value = Error{refusals[(r >> 60) % std::size(refusals)],
                  "the fake backend refused " + std::string(method), (r & 16) != 0};
  }
  if (!value.ok()) after = nullptr;
  auto deliver = [reply = std::move(reply), value = std::move(value), after = std::move(after)]() mutable {
    reply(std::move(value));
    if (after) after();
  };
  static const char* names[] = {"now", "now", "now", "now", "now", "now", "now", "now", "posted", "posted",
                                "error", "posted error", "never", "held", "held", "held"};
  trace(std::string(method) + " -> " + names[mode]);
  if (mode < 8 || mode == 10) return deliver();
  if (mode < 12) return later(std::move(deliver));
  if (mode == 12) {
    if (frame) ledger_.dropped.insert(*frame);
    return;
  }
  if (frame) ++ledger_.waiting[*frame];
  held_.push_back(Held{std::move(deliver), frame, 1 + static_cast<int>((r >> 4) & 3)});
}

std::size_t FakeBackend::release(bool all) {
  std::vector<Held> due;
  for (auto it = held_.begin(); it != held_.end();) {
    if (all || --it->wait <= 0) {
      due.push_back(std::move(*it));
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  std::weak_ptr<bool> alive = alive_;
  for (auto& h : due) {
    if (h.frame) --ledger_.waiting[*h.frame];
    trace("releasing a held reply");
    h.deliver();
    if (!alive.lock()) break;
  }
  return due.size();
}

// ---- events ---------------------------------------------------------------------------------

void FakeBackend::started(bool launched) {
  if (gone_) return;
  host_.processStarted("fake", 4242, launched);
  host_.threadChanged(1, true);
  host_.threadChanged(2, true);
  host_.moduleChanged(ModuleInfo{"1", "fake", "/usr/bin/fake", "loaded", "0x400000-0x401000"}, "new");
}

void FakeBackend::stop(const std::string& reason, std::int64_t threadId, std::uint64_t r) {
  if (gone_) return;
  StopReport s;
  s.reason = reason;
  s.threadId = threadId;
  if (r & 1) s.description = "Paused on " + reason;
  if (r & 2) s.text = someOutput(r >> 8);
  if ((r & 4) && !breakpoints_.empty()) s.hitBreakpointIds.push_back(*breakpoints_.begin());
  if (r & 8) s.hitBreakpointIds.push_back(next_++);  // one the session never heard of
  s.allThreadsStopped = (r & 16) == 0;
  ++stop_;
  host_.stopped(s);
  if (r & 32) host_.output(OutputCategory::Stdout, someOutput(r >> 12));
}

void FakeBackend::finish(std::uint64_t r) {
  if (gone_) return;
  if (r & 1) host_.output(static_cast<OutputCategory>((r >> 1) & 3), someOutput(r >> 4));
  host_.threadChanged(2, false);
  ExitStatus status{static_cast<int>((r >> 8) & 0xff), std::nullopt};
  if (r & 0x10000) status.signal = static_cast<int>(1 + ((r >> 20) % 31));
  gone_ = true;
  host_.exited(status);
}

std::vector<BreakpointReport> FakeBackend::placed(std::string_view method, const std::vector<std::int64_t>& lines,
                                                 std::uint64_t r) {
  std::vector<BreakpointReport> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    BreakpointReport s;
    std::uint64_t b = mix(r + i);
    s.verified = (b & 3) != 0;
    if (b & 4) s.id = next_++, breakpoints_.insert(*s.id);
    if (lines[i] > 0) s.line = lines[i] + static_cast<std::int64_t>((b >> 3) & 1);
    if (!s.verified) {
      s.message = std::string(method) + ": no code at this location";
      s.pending = (b & 32) != 0;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// ---- ids --------------------------------------------------------------------------------------

std::int64_t FakeBackend::newFrame() {
  frames_[next_] = stop_;
  return next_++;
}
std::int64_t FakeBackend::newRef() {
  refs_[next_] = stop_;
  return next_++;
}
std::int64_t FakeBackend::newSource() {
  sources_.insert(next_);
  return next_++;
}

void FakeBackend::checkFrame(std::int64_t id, const char* request) {
  auto it = frames_.find(id);
  if (it == frames_.end()) fail(std::string(request) + ": a frame id this backend never gave out: " + std::to_string(id));
  if (it->second != stop_)
    fail(std::string(request) + ": frame " + std::to_string(id) + " is from before the program last ran");
}

void FakeBackend::checkRef(std::int64_t id, const char* request) {
  auto it = refs_.find(id);
  if (it == refs_.end())
    fail(std::string(request) + ": a variables reference this backend never gave out: " + std::to_string(id));
  if (it->second != stop_)
    fail(std::string(request) + ": variables reference " + std::to_string(id) + " is from before the program last ran");
}

SourceInfo FakeBackend::someSource(std::uint64_t r) {
  SourceInfo s;
  s.name = r & 1 ? "fake.c" : "<string>";
  if (r & 2) s.path = "/src/fake.c";
  else s.reference = newSource();
  if (r & 4) s.presentationHint = "deemphasize";
  return s;
}

ValueInfo FakeBackend::someValue(const std::string& text, std::uint64_t r) {
  ValueInfo v;
  v.name = text;
  v.value = r & 1 ? "42" : "{...} " + text;
  if (r & 2) v.type = "int";
  if (r & 4) v.evaluateName = text;
  if (r & 8) v.variablesReference = newRef();
  if (r & 16) v.namedVariables = static_cast<std::int64_t>((r >> 8) & 7);
  if (r & 32) v.indexedVariables = static_cast<std::int64_t>((r >> 12) & 7);
  if (r & 64) v.hint = ValueHint{"data", r & 128 ? "private" : "", {"readOnly"}, (r & 256) != 0};
  if (r & 512) v.memoryReference = "0x7ffd1000";
  return v;
}

// ---- requests ---------------------------------------------------------------------------------

BackendFeatures FakeBackend::features() const {
  BackendFeatures f;
  f.conditionalBreakpoints = f.hitConditionalBreakpoints = f.logPoints = f.functionBreakpoints = true;
  f.evaluateForHovers = f.setVariable = f.setExpression = f.completions = f.exceptionInfo = true;
  f.delayedStackTraceLoading = f.clipboardContext = f.singleThreadExecution = f.steppingGranularity = true;
  f.dataBreakpoints = f.instructionBreakpoints = f.readMemory = f.writeMemory = f.disassemble = true;
  f.modules = f.stepInTargets = f.loadedSources = true;
  f.exceptionFilters = {{"raised", "Raised", "every raise", false, true, "types"},
                        {"uncaught", "Uncaught", "", true, false, ""},
                        {"sigsegv", "SIGSEGV", "segmentation faults", true, false, ""}};
  return f;
}

void FakeBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  // Not the cwd: it defaults to the fuzzer's own, and a reproducer must not depend on it.
  std::string key;
  for (const auto& a : spec.argv) key += a + "\n";
  if (spec.console != Console::Internal && host_.canRunInTerminal()) {
    // The client starts the program: the launch waits on its runInTerminal response.
    auto frame = attribute();
    if (frame) ++ledger_.waiting[*frame];
    trace("launch -> runInTerminal");
    TerminalLaunch t{spec.console, "fake", spec.cwd, spec.argv, {{"FAKE", "1"}, {"GONE", std::nullopt}}};
    std::weak_ptr<bool> alive = alive_;
    Ledger* ledger = &ledger_;
    host_.runInTerminal(t, [this, alive, ledger, frame, reply](Result<TerminalProcess> p) {
      if (frame) --ledger->waiting[*frame];
      if (!alive.lock()) return;
      if (!p) return reply(Error{errors::kTerminalFailed, "the client could not run the program: " + p.error().message, true});
      reply({});
      started(true);
    });
    return;
  }
  answer<void>("launch", key, {}, std::move(reply), [this] { started(true); });
}

void FakeBackend::attach(const AttachSpec& spec, Reply<void> reply) {
  std::string key = spec.host + ":" + std::to_string(spec.port) + "/" + std::to_string(spec.processId.value_or(0));
  answer<void>("attach", key, {}, std::move(reply), [this] { started(false); });
}

void FakeBackend::configurationDone(Reply<void> reply) {
  std::uint64_t r = roll("configurationDone.events", "");
  answer<void>("configurationDone", "", {}, std::move(reply), [this, r] {
    if (r & 1) stop(r & 2 ? "entry" : "breakpoint", 1, r >> 2);
    else if ((r & 6) == 6) finish(r >> 3);
  });
}

void FakeBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  switch (set.kind) {
    case BreakpointSet::Kind::Source: return placeSources(set.path, set.sources, std::move(reply));
    case BreakpointSet::Kind::Function: return placeFunctions(set.functions, std::move(reply));
    case BreakpointSet::Kind::Exception: return placeFilters(set.filters, std::move(reply));
  }
}

void FakeBackend::placeSources(const std::string& path, const std::vector<SourceBreakpointSpec>& breakpoints,
                               Reply<std::vector<BreakpointReport>> reply) {
  std::vector<std::int64_t> lines;
  std::string key = path;
  for (const auto& b : breakpoints) lines.push_back(b.line), key += "," + std::to_string(b.line);
  std::uint64_t r = roll("placed", key);
  auto states = placed("setBreakpoints", lines, r);
  std::optional<BreakpointReport> moved;
  for (const auto& s : states)
    if (s.id && !s.verified) moved = s;
  answer<std::vector<BreakpointReport>>("setBreakpoints", key, states, std::move(reply), [this, moved, path] {
    if (!moved || gone_) return;
    // Verified later, as when the code for it loads.
    BreakpointReport s = *moved;
    s.verified = true;
    s.pending = false;
    s.path = path;
    host_.breakpointChanged(s);
  });
}

void FakeBackend::placeFunctions(const std::vector<FunctionBreakpointSpec>& breakpoints,
                                 Reply<std::vector<BreakpointReport>> reply) {
  std::string key;
  for (const auto& b : breakpoints) key += b.name + ",";
  std::vector<std::int64_t> lines(breakpoints.size(), 0);
  answer<std::vector<BreakpointReport>>("setFunctionBreakpoints", key, placed("function", lines, roll("placed", key)),
                                       std::move(reply));
}

void FakeBackend::placeFilters(const std::vector<ExceptionFilterSpec>& filters,
                               Reply<std::vector<BreakpointReport>> reply) {
  std::string key;
  for (const auto& f : filters) key += f.filterId + ":" + f.condition.value_or("") + ",";
  std::vector<std::int64_t> lines(filters.size(), 0);
  answer<std::vector<BreakpointReport>>("setExceptionBreakpoints", key, placed("exception", lines, roll("placed", key)),
                                       std::move(reply));
}

void FakeBackend::setInstructionBreakpoints(const std::vector<InstructionBreakpointSpec>& breakpoints,
                                            Reply<std::vector<BreakpointReport>> reply) {
  std::string key;
  for (const auto& b : breakpoints) key += b.instructionReference + "+" + std::to_string(b.offset) + ",";
  std::vector<std::int64_t> lines(breakpoints.size(), 0);
  answer<std::vector<BreakpointReport>>("setInstructionBreakpoints", key,
                                       placed("instruction", lines, roll("placed", key)), std::move(reply));
}

void FakeBackend::setDataBreakpoints(const std::vector<DataBreakpointSpec>& breakpoints,
                                     Reply<std::vector<BreakpointReport>> reply) {
  std::string key;
  for (const auto& b : breakpoints) key += b.dataId + "/" + b.accessType + ",";
  std::vector<std::int64_t> lines(breakpoints.size(), 0);
  answer<std::vector<BreakpointReport>>("setDataBreakpoints", key, placed("data", lines, roll("placed", key)),
                                       std::move(reply));
}

void FakeBackend::dataBreakpointInfo(const DataBreakpointQuery& query, Reply<DataBreakpointTarget> reply) {
  if (query.variablesReference) checkRef(*query.variablesReference, "dataBreakpointInfo");
  if (query.frameId) checkFrame(*query.frameId, "dataBreakpointInfo");
  std::string key = query.name + "/" + std::to_string(query.bytes.value_or(0)) + (query.asAddress ? "@" : "");
  std::uint64_t r = roll("dataBreakpointInfo.value", key);
  DataBreakpointTarget t;
  if (r & 1) {
    t.dataId = "0x7ffd1000/" + std::to_string(query.bytes.value_or(4));
    t.description = query.name + " (4 bytes)";
    t.accessTypes = {"write", "readWrite"};
  } else {
    t.description = "'" + query.name + "' is not an lvalue";
  }
  answer<DataBreakpointTarget>("dataBreakpointInfo", key, t, std::move(reply));
}

void FakeBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  std::vector<ThreadInfo> list{{1, "main"}};
  if (!gone_) list.push_back({2, "worker \xe2\x9c\x93"});
  answer<std::vector<ThreadInfo>>("threads", "", list, std::move(reply));
}

void FakeBackend::terminate(bool force, Reply<void> reply) {
  std::uint64_t r = roll("terminate.exit", force ? "force" : "");
  // Some debuggers report the exit before they answer, some after.
  if (r & 1) {
    finish(force ? 0x10000 | (8ull << 20) : r >> 1);
    return answer<void>("terminate", force ? "force" : "", {}, std::move(reply));
  }
  answer<void>("terminate", force ? "force" : "", {}, std::move(reply), [this, force, r] {
    finish(force ? 0x10000 | (8ull << 20) : r >> 1);
  });
}

void FakeBackend::detach(Reply<void> reply) {
  answer<void>("detach", "", {}, std::move(reply), [this] { gone_ = true; });
}

void FakeBackend::resume(std::int64_t threadId, bool singleThread, Reply<bool> reply) {
  ++stop_;  // the session cleared its frames before asking
  std::string key = keyOf({threadId, singleThread});
  std::uint64_t r = roll("resume.events", key);
  answer<bool>("resume", key, !singleThread, std::move(reply), [this, threadId, r] {
    if ((r & 3) == 0) finish(r >> 2);
    else if ((r & 3) != 3) later([this, threadId, r] { stop(r & 4 ? "breakpoint" : "exception", threadId, r >> 3); });
  });
}

void FakeBackend::step(StepKind kind, const StepOptions& options, Reply<void> reply) {
  ++stop_;
  std::string key = keyOf({static_cast<int>(kind), options.threadId, static_cast<int>(options.granularity),
                           options.singleThread, options.targetId.value_or(-1)});
  std::uint64_t r = roll("step.events", key);
  std::int64_t thread = options.threadId;
  answer<void>("step", key, {}, std::move(reply), [this, thread, r] {
    if ((r & 7) == 0) return finish(r >> 3);
    if (r & 8) {
      ++stop_;  // the session clears its frames on `continued` too
      host_.continued(thread, true);
    }
    later([this, thread, r] { stop("step", thread, r >> 4); });
  });
}

void FakeBackend::pause(std::int64_t threadId, Reply<void> reply) {
  std::string key = keyOf({threadId});
  std::uint64_t r = roll("pause.events", key);
  answer<void>("pause", key, {}, std::move(reply), [this, threadId, r] { stop("pause", threadId, r); });
}

void FakeBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels,
                             Reply<StackPage> reply) {
  require(startFrame >= 0 && levels >= 0, "stackTrace: a negative page reached the backend");
  std::string key = keyOf({threadId, startFrame, levels});
  std::uint64_t r = roll("stackTrace.value", key);
  // The frames are read now, as a debugger reads them when asked; the reply may come later.
  std::int64_t total = static_cast<std::int64_t>(r % 6);
  std::int64_t first = std::min(startFrame, total);
  std::int64_t count = levels > 0 ? std::min(levels, total - first) : total - first;
  StackPage page;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t f = mix(r + static_cast<std::uint64_t>(i));
    FrameInfo fr;
    fr.id = newFrame();
    fr.name = f & 1 ? "main" : "compute<int>(int, char**)";
    if (f & 2) fr.source = someSource(f >> 2);
    fr.line = static_cast<std::int64_t>((f >> 8) & 255);
    fr.column = static_cast<std::int64_t>((f >> 16) & 7);
    if (f & 0x1000000) fr.presentationHint = "subtle";
    if (f & 0x2000000) fr.instructionPointerReference = "0x401136";
    if (f & 0x4000000) fr.moduleId = "1";
    page.frames.push_back(std::move(fr));
  }
  if (r & 0x100) page.totalFrames = total;
  answer<StackPage>("stackTrace", key, page, std::move(reply));
}

void FakeBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  checkFrame(frameId, "scopes");
  std::uint64_t r = roll("scopes.value", keyOf({frameId}));
  std::vector<ScopeInfo> list{{"Locals", "locals", newRef(), std::nullopt, std::nullopt, false}};
  if (r & 1) list.push_back({"Registers", "registers", newRef(), 17, std::nullopt, true});
  if (r & 2) list.push_back({"Empty", "", 0, std::nullopt, std::nullopt, false});
  answer<std::vector<ScopeInfo>>("scopes", keyOf({frameId}), list, std::move(reply));
}

void FakeBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  checkRef(query.variablesReference, "variables");
  std::string key = keyOf({query.variablesReference, query.start, query.count}) + query.filter;
  std::uint64_t r = roll("variables.value", key);
  std::vector<ValueInfo> list;
  std::int64_t n = static_cast<std::int64_t>(r % 5);
  if (query.count > 0) n = std::min(n, query.count);
  for (std::int64_t i = 0; i < n; ++i)
    list.push_back(someValue("v" + std::to_string(i), mix(r + static_cast<std::uint64_t>(i))));
  answer<std::vector<ValueInfo>>("variables", key, list, std::move(reply));
}

void FakeBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  if (query.frameId) checkFrame(*query.frameId, "evaluate");
  require(query.context != "repl" || query.expression.empty() || query.expression[0] != '!',
          "a Debug Console '!' command reached the debugger's evaluate");
  std::string key = query.expression + "/" + query.context + "/" + std::to_string(query.frameId.value_or(0));
  ValueInfo v = someValue(query.expression, roll("evaluate.value", key));
  v.name.clear();
  answer<ValueInfo>("evaluate", key, v, std::move(reply));
}

void FakeBackend::setVariable(std::int64_t variablesReference, const std::string& name, const std::string& value,
                              Reply<ValueInfo> reply) {
  checkRef(variablesReference, "setVariable");
  std::string key = std::to_string(variablesReference) + "/" + name + "=" + value;
  ValueInfo v = someValue(name, roll("setVariable.value", key));
  v.value = value;
  answer<ValueInfo>("setVariable", key, v, std::move(reply));
}

void FakeBackend::setExpression(const std::string& expression, const std::string& value,
                                std::optional<std::int64_t> frameId, Reply<ValueInfo> reply) {
  if (frameId) checkFrame(*frameId, "setExpression");
  std::string key = expression + "=" + value + "/" + std::to_string(frameId.value_or(0));
  ValueInfo v = someValue(expression, roll("setExpression.value", key));
  v.value = value;
  answer<ValueInfo>("setExpression", key, v, std::move(reply));
}

void FakeBackend::completions(const CompletionsQuery& query, Reply<std::vector<CompletionEntry>> reply) {
  if (query.frameId) checkFrame(*query.frameId, "completions");
  std::string key = query.text + keyOf({query.column, query.line});
  std::vector<CompletionEntry> list{{query.text + "_done", "", "function", std::nullopt, std::nullopt},
                                    {"print", "print(", "", 0, static_cast<std::int64_t>(query.text.size())}};
  answer<std::vector<CompletionEntry>>("completions", key, list, std::move(reply));
}

void FakeBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  std::uint64_t r = roll("exceptionInfo.value", keyOf({threadId}));
  ExceptionInfo d{"ValueError", r & 1 ? "bad value" : "", r & 2 ? "" : "unhandled", "ValueError",
                     "builtins.ValueError", "bad value \xf0\x9f\x90\x8d", r & 4 ? "Traceback...\n" : ""};
  answer<ExceptionInfo>("exceptionInfo", keyOf({threadId}), d, std::move(reply));
}

void FakeBackend::source(std::int64_t sourceReference, Reply<SourceContent> reply) {
  if (!sources_.count(sourceReference))
    fail("source: a source reference this backend never gave out: " + std::to_string(sourceReference));
  answer<SourceContent>("source", keyOf({sourceReference}), SourceContent{"x = 1\nprint(x)\n", "text/x-python"},
                        std::move(reply));
}

void FakeBackend::readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                             Reply<MemoryContents> reply) {
  require(count >= 0, "readMemory: a negative count reached the backend");
  std::string key = memoryReference + keyOf({offset, count});
  std::uint64_t r = roll("readMemory.value", key);
  MemoryContents m;
  m.address = memoryReference;
  std::int64_t readable = std::min<std::int64_t>(count, static_cast<std::int64_t>(r % 96));
  for (std::int64_t i = 0; i < readable; ++i) m.data.push_back(static_cast<std::uint8_t>(mix(r + i)));
  m.unreadableBytes = count - readable;
  answer<MemoryContents>("readMemory", key, m, std::move(reply));
}

void FakeBackend::writeMemory(const std::string& memoryReference, std::int64_t offset, std::vector<std::uint8_t> data,
                              bool allowPartial, Reply<std::int64_t> reply) {
  std::string key = memoryReference + keyOf({offset, static_cast<std::int64_t>(data.size()), allowPartial});
  std::int64_t n = static_cast<std::int64_t>(data.size());
  if (allowPartial && n > 0) n -= static_cast<std::int64_t>(roll("writeMemory.value", key) % 2);
  answer<std::int64_t>("writeMemory", key, n, std::move(reply));
}

void FakeBackend::disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
  require(query.instructionCount >= 0, "disassemble: a negative instruction count reached the backend");
  std::string key = query.memoryReference +
                    keyOf({query.offset, query.instructionOffset, query.instructionCount, query.resolveSymbols});
  std::uint64_t r = roll("disassemble.value", key);
  std::vector<InstructionInfo> list;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(query.instructionCount, 12); ++i) {
    std::uint64_t x = mix(r + static_cast<std::uint64_t>(i));
    InstructionInfo in;
    in.address = "0x" + std::to_string(401000 + i * 4);
    in.instruction = x & 1 ? "mov %rsp,%rbp" : "(bad)";
    if (x & 2) in.bytes = "48 89 e5";
    if (query.resolveSymbols && (x & 4)) in.symbol = "main+" + std::to_string(i * 4);
    if (x & 8) in.location = someSource(x >> 4);
    if (x & 16) in.line = static_cast<std::int64_t>((x >> 8) & 127);
    if (x & 32) in.presentationHint = "invalid";
    list.push_back(std::move(in));
  }
  answer<std::vector<InstructionInfo>>("disassemble", key, list, std::move(reply));
}

void FakeBackend::modules(Reply<std::vector<ModuleInfo>> reply) {
  std::vector<ModuleInfo> list{{"1", "fake", "/usr/bin/fake", "loaded", "0x400000-0x401000"},
                               {"2", "libc.so.6", "/lib/libc.so.6", "", ""},
                               {"3", "[vdso]", "", "no symbols", "0x7fff0000-0x7fff2000"}};
  answer<std::vector<ModuleInfo>>("modules", "", list, std::move(reply));
}

void FakeBackend::loadedSources(Reply<std::vector<SourceInfo>> reply) {
  std::uint64_t r = roll("loadedSources.value", "");
  std::vector<SourceInfo> list{someSource(r), someSource(r >> 3)};
  answer<std::vector<SourceInfo>>("loadedSources", "", list, std::move(reply));
}

void FakeBackend::stepInTargets(std::int64_t frameId, Reply<std::vector<StepInTargetInfo>> reply) {
  checkFrame(frameId, "stepInTargets");
  std::vector<StepInTargetInfo> list{{next_++, "compute", 12}, {next_++, "operator()", std::nullopt}};
  answer<std::vector<StepInTargetInfo>>("stepInTargets", keyOf({frameId}), list, std::move(reply));
}

}  // namespace strata::fuzz
