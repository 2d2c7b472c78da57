// Launch sites: the Python and native frames of the thread that launches a kernel, captured in
// full only for a launch key not seen before. Runs inside the target; finds CPython's C API and
// libunwind at run time, so it links neither and works in processes that have no Python.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace strata::cuda::collector {

struct PythonFrameText {
  std::string function;  // co_qualname
  std::string file;      // co_filename
  int line = 0;
};
struct NativeFrameText {
  std::uint64_t pc = 0;          // return address
  std::uint64_t elfAddress = 0;  // pc minus the module's load bias
  std::string module;
  std::string symbol;
};
struct CapturedSite {
  std::uint32_t id = 0;
  std::uint32_t cbid = 0;
  std::uint16_t domain = 0;
  std::string api;
  std::vector<PythonFrameText> python;  // innermost first
  std::vector<NativeFrameText> native;  // innermost first
};

// (code object, last instruction) of one Python frame: identifies the line being run.
struct PythonKeyFrame {
  const void* code = nullptr;
  int lasti = 0;
};

// CPython's frame API, looked up in the process (dlsym) the first time it is needed.
class PythonFrames {
 public:
  PythonFrames();
  ~PythonFrames();
  // True when this process has a CPython (>= 3.12) exporting the frame API.
  bool available();
  // The calling thread's innermost frames, at most n, when it holds the GIL (never takes it);
  // 0 otherwise (no GIL, no Python, interpreter finalizing, an exception being raised).
  int top(PythonKeyFrame* out, int n);
  // Every frame (at most `max`) with names and lines; call only after top() returned > 0 on
  // the same thread, within the same callback.
  void full(std::vector<PythonFrameText>& out, std::size_t max);

  struct Api;  // the C API's entry points

 private:
  std::unique_ptr<Api> api_;
  std::once_flag once_;
  bool ok_ = false;
};

// Native return addresses of the calling thread through libunwind (unw_backtrace, loaded at
// run time; glibc's backtrace when it is absent).
class NativeStack {
 public:
  NativeStack();
  // Leading frames in these modules are dropped: the collector, CUPTI, the driver, the
  // runtime library (their frames lie between the callback and the program's call).
  void skipModules(const std::vector<std::string>& basenamePrefixes, const void* ownAddress);
  // Return addresses, innermost first: the caller's frames count `internal` (the function
  // calling capture included), then any leading frames in the skipped modules, are dropped.
  int capture(std::uint64_t* pcs, int max, int internal);
  // Module, ELF address and symbol of each (dladdr).
  static void resolve(const std::uint64_t* pcs, int n, std::vector<NativeFrameText>& out);
  const char* unwinder() const { return unwinderName_; }

 private:
  bool skipped(std::uint64_t pc) const;
  using Backtrace = int (*)(void**, int);
  Backtrace backtrace_ = nullptr;
  const char* unwinderName_ = "none";
  std::vector<std::pair<std::uint64_t, std::uint64_t>> skip_;  // [lo, hi)
};

// Launch key -> site id, lock-free on the hot path; a full stack only for a new key.
class SiteTable {
 public:
  SiteTable(PythonFrames& python, NativeStack& native, std::size_t slots = 1 << 16);
  ~SiteTable();

  struct Lookup {
    std::uint32_t site = 0;  // 0: table full
    bool fresh = false;      // `captured` holds a new site to publish
  };
  // The key: the launch API and the four innermost Python frames (code, lasti) when the thread
  // holds the GIL; otherwise the API and the first 16 native return addresses past the skipped
  // modules. Call from the launching thread, inside the launch callback.
  Lookup lookup(std::uint32_t cbid, std::uint16_t domain, std::string_view api, CapturedSite& captured);
  std::uint64_t overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
  std::uint32_t count() const { return next_; }

 private:
  struct Slot {
    std::atomic<std::uint64_t> key{0};
    std::atomic<std::uint32_t> site{0};
  };
  std::uint32_t find(std::uint64_t key) const;
  PythonFrames& python_;
  NativeStack& native_;
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_;
  std::mutex insert_;
  std::uint32_t next_ = 0;
  std::atomic<std::uint64_t> overflowed_{0};
};

}  // namespace strata::cuda::collector
