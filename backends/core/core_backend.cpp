// CoreBackend (core_backend.hpp): a core file served as a stopped process. Everything is read
// on the session's thread: the core is mapped, the symbols load lazily, each thread's stack is
// unwound when it is first asked for.
#include "backends/core/core_backend.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "backends/mixed/mixed_backend.hpp"
#include "backends/native/backend/convert.hpp"
#include "backends/native/debugger/convert.hpp"
#include "strata/hex.hpp"
#include "strata/native/symbols/disassembler.hpp"
#include "strata/native/symbols/expression.hpp"
#include "strata/native/engine/signals.hpp"
#include "strata/native/symbols/values.hpp"

namespace strata::backends {

namespace sym = native::symbols;
namespace py = python::remote;
namespace convert = native_convert;
namespace dbg = native::debugger;

struct CoreBackend::Frame {
  pid_t tid = 0;
  bool python = false;
  std::size_t nativeIndex = 0;  // into the thread's StackView frames (native)
  sym::Frame native;
  py::PythonFrame pythonFrame;
  std::shared_ptr<const sym::FrameContext> context;
};

struct CoreBackend::Handle {
  enum class Kind { Locals, Registers, Children, PythonLocals } kind = Kind::Locals;
  std::int64_t frameId = 0;
  sym::Value value;
};

namespace {

bool existsHere(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

CoreBackend::CoreBackend(boost::asio::io_context& io, BackendHost& host) : io_(io), host_(host) {}
CoreBackend::~CoreBackend() = default;

BackendFeatures CoreBackend::features() const {
  BackendFeatures f;
  f.evaluateForHovers = true;
  f.exceptionInfo = true;
  f.readMemory = true;
  f.disassemble = true;
  f.modules = true;
  f.clipboardContext = true;
  return f;
}

Error CoreBackend::cannotRun(const char* what) const {
  return Error{errors::kCoreCannotRun, std::string(what) + ": a core file does not run; it shows the process as it was when the core was written", true};
}

void CoreBackend::launch(const LaunchSpec& spec, Reply<void> reply) {
  core::CoreOptions options;
  options.sysroot = spec.sysroot;
  if (!spec.argv.empty()) options.program = spec.argv[0];
  auto opened = stacks::CoreProcess::open(spec.coreFile, options);
  if (!opened) return reply(opened.takeError());
  process_ = std::move(opened).value();
  core::CoreFile& core = process_->core();
  std::string what = core.arguments().empty() ? core.command() : core.arguments();
  std::string line = "Core file " + spec.coreFile + ": process " + std::to_string(core.pid()) + " (" + what + ")";
  if (const auto& s = core.signal()) line += ", ended by " + s->description;
  host_.output(OutputCategory::Console, line + ".\n");
  for (const auto& problem : core.problems()) host_.output(OutputCategory::Important, "Core file: " + problem + "\n");
  host_.processStarted(core.executable().empty() ? core.command() : core.executable(), core.pid(), false);
  for (const auto& m : process_->modules().modules())
    host_.moduleChanged(convert::toModuleInfo(dbg::toModuleEntry(m), true), "new");
  reply({});
}

void CoreBackend::configurationDone(Reply<void> reply) {
  reply({});
  if (!process_) return;
  // The one stop of the session: where the process was when the core was written.
  StopReport stop;
  stop.threadId = crashingThread();
  const auto& s = process_->core().signal();
  if (s && s->signo) {
    stop.reason = "exception";
    stop.description = "Core file: " + native::engine::signalName(s->signo);
    stop.text = s->description;
  } else {
    stop.reason = "pause";
    stop.description = "Core file: the process as it was when the core was taken";
  }
  host_.stopped(stop);
}

std::int64_t CoreBackend::crashingThread() const {
  const auto& threads = process_->core().threads();
  for (const auto& t : threads)
    if (t.signal) return t.registers.tid;
  return threads.empty() ? 0 : threads.front().registers.tid;
}

void CoreBackend::setBreakpoints(const BreakpointSet& set, Reply<std::vector<BreakpointReport>> reply) {
  // Breakpoints of a launch configuration shared with live sessions: kept, never hit.
  std::vector<BreakpointReport> out(set.size());
  for (auto& b : out) b.message = "a core file does not run: breakpoints are never hit";
  reply(std::move(out));
}

void CoreBackend::threads(Reply<std::vector<ThreadInfo>> reply) {
  std::vector<ThreadInfo> out;
  if (process_) {
    const auto& core = process_->core();
    for (const auto& t : core.threads()) {
      ThreadInfo info;
      info.id = t.registers.tid;
      info.name = (t.registers.tid == core.pid() ? core.command() : "thread " + std::to_string(t.registers.tid));
      if (t.signal) info.name += " (" + native::engine::signalName(t.signal) + ")";
      out.push_back(std::move(info));
    }
  }
  reply(std::move(out));
}

void CoreBackend::terminate(bool, Reply<void> reply) {
  reply({});
  if (ended_) return;
  ended_ = true;
  ExitStatus status;
  if (process_ && process_->core().signal()) status.signal = process_->core().signal()->signo;
  host_.exited(status);
}

void CoreBackend::detach(Reply<void> reply) { terminate(false, std::move(reply)); }
void CoreBackend::resume(std::int64_t, bool, Reply<bool> reply) { reply(cannotRun("continue")); }
void CoreBackend::step(StepKind, const StepOptions&, Reply<void> reply) { reply(cannotRun("step")); }
void CoreBackend::pause(std::int64_t, Reply<void> reply) { reply(cannotRun("pause")); }

Result<std::vector<FrameInfo>> CoreBackend::mergedStack(std::int64_t threadId) {
  if (auto it = merged_.find(threadId); it != merged_.end()) return it->second;
  if (!process_) return Error{errors::kNotStopped, "no core file is open", true};
  auto view = process_->stack(static_cast<pid_t>(threadId));
  if (!view) return view.takeError();
  sym::StackView& stack = **view;
  auto nativeFrames = stack.frames(0, stack.totalFrames());
  std::vector<FrameInfo> native;
  for (std::size_t i = 0; i < nativeFrames.size(); ++i) {
    dbg::FrameEntry e = dbg::toFrameEntry(nativeFrames[i], 0);
    if (const auto& raw = stack.raw(nativeFrames[i].physicalIndex); raw.cfaKnown) e.cfa = raw.cfa;
    FrameInfo f = convert::toFrameInfo(e, existsHere, {});
    f.moduleId = nativeFrames[i].moduleName;
    native.push_back(std::move(f));
  }
  // The Python frames of this thread, read once for the whole core (with their locals).
  const py::PythonSnapshot* snapshot = process_->python(true);
  const py::PythonThread* pt = nullptr;
  if (snapshot)
    for (const auto& t : snapshot->threads)
      if (t.tid == threadId) pt = &t;
  std::optional<std::vector<py::MergedFrame>> merged;
  if (pt) {
    std::vector<std::string> names;
    std::vector<std::uint64_t> cfas;
    for (std::size_t i = 0; i < nativeFrames.size(); ++i) {
      names.push_back(nativeFrames[i].function);
      cfas.push_back(native[i].cfa);
    }
    merged = py::mergeStacks(names, *pt, cfas);
  }
  std::vector<FrameInfo> out;
  auto addNative = [&](std::size_t i) {
    if (pt && interpreterModule(nativeFrames[i].moduleName)) return;
    auto frame = std::make_unique<Frame>();
    frame->tid = static_cast<pid_t>(threadId);
    frame->nativeIndex = i;
    frame->native = nativeFrames[i];
    FrameInfo f = native[i];
    f.id = nextFrame_++;
    f.instructionPointerReference = hexAddress(nativeFrames[i].pc);
    frames_[f.id] = std::move(frame);
    out.push_back(std::move(f));
  };
  auto addPython = [&](const py::PythonFrame& pf) {
    if (pf.isShim) return;
    auto frame = std::make_unique<Frame>();
    frame->tid = static_cast<pid_t>(threadId);
    frame->python = true;
    frame->pythonFrame = pf;
    FrameInfo f = pythonFrameInfo(pf, nextFrame_++);
    frames_[f.id] = std::move(frame);
    out.push_back(std::move(f));
  };
  if (merged) {
    for (const auto& m : *merged) m.python ? addPython(pt->frames[m.index]) : addNative(m.index);
  } else {
    if (pt)
      for (const auto& pf : pt->frames) addPython(pf);
    for (std::size_t i = 0; i < nativeFrames.size(); ++i) addNative(i);
  }
  merged_[threadId] = out;
  return out;
}

void CoreBackend::stackTrace(std::int64_t threadId, std::int64_t startFrame, std::int64_t levels, Reply<StackPage> reply) {
  auto all = mergedStack(threadId);
  if (!all) return reply(all.takeError());
  StackPage page;
  page.totalFrames = static_cast<std::int64_t>(all->size());
  auto start = static_cast<std::size_t>(std::max<std::int64_t>(0, startFrame));
  std::size_t end = levels > 0 ? std::min(all->size(), start + static_cast<std::size_t>(levels)) : all->size();
  for (std::size_t i = start; i < end; ++i) page.frames.push_back((*all)[i]);
  reply(std::move(page));
}

Result<std::shared_ptr<const sym::FrameContext>> CoreBackend::contextOf(std::int64_t frameId) {
  auto it = frames_.find(frameId);
  if (it == frames_.end()) return Error{errors::kUnknownFrame, "frame " + std::to_string(frameId) + " is unknown", true};
  Frame& f = *it->second;
  if (f.python) return Error{errors::kUnknownFrame, "frame " + std::to_string(frameId) + " is a Python frame", true};
  if (!f.context) {
    auto view = process_->stack(f.tid);
    if (!view) return view.takeError();
    auto made = sym::makeFrameContext(**view, f.native, process_->core());
    if (!made) return made.takeError();
    f.context = std::move(made).value();
  }
  return f.context;
}

void CoreBackend::scopes(std::int64_t frameId, Reply<std::vector<ScopeInfo>> reply) {
  auto it = frames_.find(frameId);
  if (it == frames_.end()) return reply(Error{errors::kUnknownFrame, "frame " + std::to_string(frameId) + " is unknown", true});
  std::vector<ScopeInfo> out;
  auto add = [&](const char* name, const char* hint, Handle::Kind kind, bool expensive) {
    auto h = std::make_unique<Handle>();
    h->kind = kind;
    h->frameId = frameId;
    ScopeInfo s;
    s.name = name;
    s.presentationHint = hint;
    s.variablesReference = nextHandle_++;
    s.expensive = expensive;
    handles_[s.variablesReference] = std::move(h);
    out.push_back(std::move(s));
  };
  if (it->second->python) {
    add("Locals", "locals", Handle::Kind::PythonLocals, false);
  } else {
    add("Locals", "locals", Handle::Kind::Locals, false);
    add("Registers", "registers", Handle::Kind::Registers, true);
  }
  reply(std::move(out));
}

ValueInfo CoreBackend::describe(const sym::Value& value, std::int64_t frameId) {
  dbg::Variable v = dbg::toVariable(value);
  if (v.namedChildren + v.indexedChildren > 0) {
    auto h = std::make_unique<Handle>();
    h->kind = Handle::Kind::Children;
    h->frameId = frameId;
    h->value = value;
    v.variablesReference = static_cast<int>(nextHandle_);
    handles_[nextHandle_++] = std::move(h);
  }
  return convert::toValueInfo(v);
}

void CoreBackend::variables(const VariablesQuery& query, Reply<std::vector<ValueInfo>> reply) {
  auto it = handles_.find(query.variablesReference);
  if (it == handles_.end())
    return reply(Error{errors::kUnknownReference, "variables: reference " + std::to_string(query.variablesReference) + " is unknown", true});
  Handle h = *it->second;
  std::vector<ValueInfo> out;
  auto start = static_cast<std::uint64_t>(std::max<std::int64_t>(0, query.start));
  auto count = static_cast<std::uint64_t>(std::max<std::int64_t>(0, query.count));
  switch (h.kind) {
    case Handle::Kind::PythonLocals: {
      const Frame& f = *frames_.at(h.frameId);
      if (f.pythonFrame.locals)
        for (const auto& l : *f.pythonFrame.locals)
          out.push_back(ValueInfo{.name = l.name, .value = l.value.empty() ? "<" + l.type + ">" : l.value, .type = l.type});
      break;
    }
    case Handle::Kind::Children: {
      auto filter = query.filter == "named" ? sym::ChildFilter::Named : query.filter == "indexed" ? sym::ChildFilter::Indexed : sym::ChildFilter::All;
      auto list = sym::children(h.value, filter, start, count ? count : 1000);
      if (!list) return reply(list.takeError());
      for (const auto& v : *list) out.push_back(describe(v, h.frameId));
      break;
    }
    case Handle::Kind::Registers: {
      const Frame& f = *frames_.at(h.frameId);
      std::vector<std::pair<std::string, std::string>> regs;
      if (f.native.physicalIndex == 0 && !f.native.inlined) {
        for (const auto& t : process_->core().threads())
          if (t.registers.tid == f.tid) regs = sym::registersOf(t.registers);
      } else {
        auto ctx = contextOf(h.frameId);
        if (!ctx) return reply(ctx.takeError());
        regs = sym::registersOf(**ctx);
      }
      for (const auto& [name, value] : regs) out.push_back(convert::toValueInfo(dbg::registerVariable(name, value)));
      break;
    }
    case Handle::Kind::Locals: {
      auto ctx = contextOf(h.frameId);
      if (!ctx) return reply(ctx.takeError());
      auto list = sym::localsOf(*ctx);
      if (!list) return reply(list.takeError());
      std::uint64_t end = count ? std::min<std::uint64_t>(list->size(), start + count) : list->size();
      for (std::uint64_t i = start; i < end; ++i) out.push_back(describe((*list)[i], h.frameId));
      break;
    }
  }
  reply(std::move(out));
}

void CoreBackend::evaluate(const EvaluateQuery& query, Reply<ValueInfo> reply) {
  if (!process_) return reply(Error{errors::kNotStopped, "no core file is open", true});
  std::int64_t frameId = query.frameId.value_or(0);
  if (!frameId) {
    // No frame: the crashing thread's innermost frame.
    auto stack = mergedStack(crashingThread());
    if (!stack) return reply(stack.takeError());
    for (const auto& f : *stack)
      if (!frames_.at(f.id)->python) {
        frameId = f.id;
        break;
      }
  }
  auto it = frames_.find(frameId);
  if (it == frames_.end()) return reply(Error{errors::kUnknownFrame, "evaluate: frame " + std::to_string(frameId) + " is unknown", true});
  if (it->second->python) {
    // A Python frame of a core: its locals as read from memory, by name.
    const auto& locals = it->second->pythonFrame.locals;
    if (locals)
      for (const auto& l : *locals)
        if (l.name == query.expression)
          return reply(ValueInfo{.value = l.value.empty() ? "<" + l.type + ">" : l.value, .type = l.type});
    return reply(Error{errors::kUnknownName, "evaluate '" + query.expression + "': in a core file a Python frame shows its locals only, and it has no local of that name", true});
  }
  auto ctx = contextOf(frameId);
  if (!ctx) return reply(ctx.takeError());
  auto parsed = sym::Expression::parse(query.expression);
  if (!parsed) return reply(Error{parsed.error().id, "evaluate '" + query.expression + "': " + parsed.error().message, true});
  auto value = parsed->evaluate(*ctx);
  if (!value) return reply(Error{value.error().id, "evaluate '" + query.expression + "': " + value.error().message, true});
  if (value->name.empty()) value->name = query.expression;
  if (value->expression.empty()) value->expression = query.expression;
  ValueInfo v = describe(*value, frameId);
  v.name.clear();
  reply(std::move(v));
}

void CoreBackend::setVariable(std::int64_t, const std::string&, const std::string&, Reply<ValueInfo> reply) {
  reply(cannotRun("setVariable"));
}

void CoreBackend::exceptionInfo(std::int64_t threadId, Reply<ExceptionInfo> reply) {
  if (!process_) return reply(Error{errors::kNotStopped, "no core file is open", true});
  ExceptionInfo info;
  const auto& s = process_->core().signal();
  if (!s || threadId != crashingThread())
    return reply(Error{errors::kNotStopped, "thread " + std::to_string(threadId) + " took no fatal signal in this core", true});
  info.exceptionId = native::engine::signalName(s->signo);
  info.description = s->description;
  info.breakMode = "always";
  info.typeName = info.exceptionId;
  info.fullTypeName = info.exceptionId;
  info.message = s->description;
  // Where, in one line: the function it happened in and the program's own frame that led there
  // (mixed mode's words for a live crash).
  if (auto stack = mergedStack(threadId); stack) info.description = crashDiagnosis(s->description, *stack);
  reply(std::move(info));
}

void CoreBackend::readMemory(const std::string& memoryReference, std::int64_t offset, std::int64_t count,
                             Reply<MemoryContents> reply) {
  if (!process_) return reply(Error{errors::kNotStopped, "no core file is open", true});
  auto address = convert::parseMemoryReference(memoryReference, offset);
  if (!address) return reply(address.takeError());
  constexpr std::int64_t kMax = 16 << 20;
  if (count < 0 || count > kMax)
    return reply(Error{errors::kRequestTooLarge, "readMemory: at most " + std::to_string(kMax) + " bytes at once", true});
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count));
  bytes.resize(process_->core().readPrefix(*address, bytes.data(), bytes.size()));
  reply(convert::toMemoryContents(*address, count, std::move(bytes)));
}

void CoreBackend::writeMemory(const std::string&, std::int64_t, std::vector<std::uint8_t>, bool, Reply<std::int64_t> reply) {
  reply(cannotRun("writeMemory"));
}

void CoreBackend::disassemble(const DisassembleQuery& query, Reply<std::vector<InstructionInfo>> reply) {
  if (!process_) return reply(Error{errors::kNotStopped, "no core file is open", true});
  auto address = convert::parseMemoryReference(query.memoryReference, query.offset);
  if (!address) return reply(address.takeError());
  if (!disassembler_) {
    auto created = sym::Disassembler::create();
    if (!created) return reply(created.takeError());
    disassembler_ = std::move(created).value();
  }
  auto list = dbg::disassembleWindow(*disassembler_, process_->core(), process_->modules(), *address, query.instructionOffset,
                                     static_cast<std::size_t>(query.instructionCount));
  if (!list) return reply(list.takeError());
  std::vector<InstructionInfo> out;
  for (const auto& ins : *list) out.push_back(convert::toInstructionInfo(ins, query.resolveSymbols));
  reply(std::move(out));
}

void CoreBackend::modules(Reply<std::vector<ModuleInfo>> reply) {
  std::vector<ModuleInfo> out;
  if (process_)
    for (const auto& m : process_->modules().modules()) out.push_back(convert::toModuleInfo(dbg::toModuleEntry(m), true));
  reply(std::move(out));
}

}  // namespace strata::backends
