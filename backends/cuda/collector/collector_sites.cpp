// Launch sites inside the collector (see collector.hpp and the README's "Launch sites"): new
// sites named off the launch path, the scopes of Python threads waiting for other threads'
// launches, and the wrapper around torch's autograd engine that opens them.
#include <dlfcn.h>

#include <ctime>

#include "collector.hpp"

namespace strata::cuda::collector {

void Collector::drainSites() {
  std::lock_guard<std::mutex> drain(drain_);
  std::vector<RawSite*> raw;
  sites_.takePending(raw);
  if (raw.empty()) return;
  std::vector<CapturedSite> named;
  named.reserve(raw.size());
  for (const RawSite* r : raw) named.push_back(nameSite(*r, python_));
  sites_.release(raw);
  std::lock_guard<std::mutex> lock(producer_);
  if (!publisher_) return;
  for (const CapturedSite& c : named) publisher_->addSite(c);
  publisher_->flushPending();
}

int Collector::scopeEnter(int kind, int skip) {
  if (forked_.load(std::memory_order_relaxed) || !running_.load(std::memory_order_relaxed) ||
      mode() != ring::Mode::Stacks)
    return -1;
  return scopes_.enter(python_, kind, skip);
}

void Collector::scopeLeave(int slot) { scopes_.leave(slot); }

void Collector::pythonHooked(bool installed) { pythonHooked_.store(installed, std::memory_order_relaxed); }

namespace {

// A Python string literal of `text` (for the hook's source).
std::string pythonLiteral(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "'";
}

// Runs on the main thread, with the GIL (a pending call): torch's autograd engine wrapped so
// that the thread calling backward() says, on its way into the C++ engine, that it waits for
// the kernels autograd's threads are about to launch. `Variable._execution_engine.run_backward`
// is the one call torch 1.13 to 2.x make for backward() and autograd.grad().
constexpr const char* kAutogradHook = R"PY(
def install(path):
    import sys
    variable = sys.modules.get("torch.autograd.variable")
    engine = getattr(getattr(variable, "Variable", None), "_execution_engine", None)
    if engine is None:
        return 0
    if getattr(engine, "_strata_waits", False):
        return 1
    import ctypes
    lib = ctypes.PyDLL(path)
    enter, leave = lib.strata_gpu_scope_enter, lib.strata_gpu_scope_leave
    enter.argtypes, enter.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    leave.argtypes, leave.restype = (ctypes.c_int,), None

    class StrataAutogradEngine:
        """torch's autograd engine, telling Strata's GPU collector which Python line waits for
        the kernels its threads launch in backward()."""
        _strata_waits = True

        def run_backward(self, *args, **kwargs):
            scope = enter(1, 1)
            try:
                return engine.run_backward(*args, **kwargs)
            finally:
                leave(scope)

        def __getattr__(self, name):
            return getattr(engine, name)

    variable.Variable._execution_engine = StrataAutogradEngine()
    return 1

try:
    import ctypes as _ctypes
    _ctypes.PyDLL(PATH).strata_gpu_python_hooked(install(PATH))
except BaseException:
    pass
)PY";

int runAutogradHook(void* user) {
  auto* c = static_cast<Collector*>(user);
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&runAutogradHook), &info) || !info.dli_fname) return 0;
  std::string source = kAutogradHook;
  const std::string literal = pythonLiteral(info.dli_fname);
  for (std::size_t at; (at = source.find("PATH")) != std::string::npos;) source.replace(at, 4, literal);
  // Run in a namespace of its own: __main__ gets no name.
  c->python().runSimpleString(("exec(compile(" + pythonLiteral(source) +
                                ", '<strata-gpu-hooks>', 'exec'), {'__name__': 'strata_gpu_hooks'})")
                                   .c_str());
  return 0;  // a pending call that returns nonzero raises SystemError in the program
}

}  // namespace

void Collector::maybeHookPython() {
  if (pythonHooked_.load(std::memory_order_relaxed) || mode() != ring::Mode::Stacks) return;
  if (hookAttempts_.load(std::memory_order_relaxed) >= 20 || !python_.available()) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const std::int64_t now = std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  std::int64_t last = lastHookNs_.load(std::memory_order_relaxed);
  if (last && now - last < 1000000000) return;
  if (!lastHookNs_.compare_exchange_strong(last, now)) return;  // another thread asks now
  hookAttempts_.fetch_add(1, std::memory_order_relaxed);
  python_.addPendingCall(&runAutogradHook, this);
}

}  // namespace strata::cuda::collector
