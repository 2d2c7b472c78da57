// Launch sites: where each kernel launch came from. The launch callback computes a key from the
// launching thread's Python frames (read from its own memory, no GIL: python_frames.hpp) and its
// first native return addresses; a key seen before costs a hash and a lock-free probe, a new key
// copies the raw frames into a slot taken in advance, and their names and lines are looked up
// later, off the launch path (SiteTable::takePending). A thread with no Python frame (autograd's
// engine threads in backward, communication threads) is tied to the Python thread waiting for it
// (Scopes).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "python_frames.hpp"
#include "strata/cuda/record.hpp"

namespace strata::cuda::collector {

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
  SiteAttribution attribution = SiteAttribution::None;
  std::uint32_t callerTid = 0;          // Caller: the waiting thread
  std::uint8_t waitKind = 0;            // Caller: what it waits in (Scopes::Kind)
  std::vector<PythonFrameText> python;  // innermost first
  std::vector<NativeFrameText> native;  // innermost first
};

inline constexpr int kSitePythonFrames = 128;  // a new site keeps at most this many of each
inline constexpr int kSiteNativeFrames = 96;

// A new site as the launch callback left it: frames not yet named.
struct RawSite {
  std::uint32_t id = 0;
  std::uint32_t cbid = 0;
  std::uint16_t domain = 0;
  SiteAttribution attribution = SiteAttribution::None;
  std::uint8_t waitKind = 0;
  std::uint32_t callerTid = 0;
  const char* api = "";  // static text (the API names table)
  std::uint16_t pythonCount = 0, nativeCount = 0;
  RawPythonFrame python[kSitePythonFrames];
  std::uint64_t native[kSiteNativeFrames];
};

// A new site's frames named: Python frames through `python` (read later, see PythonFrames::resolve),
// native ones through dladdr.
CapturedSite nameSite(const RawSite& raw, PythonFrames& python);

// Native return addresses of the calling thread through libunwind (unw_backtrace, loaded at
// run time; glibc's backtrace when it is absent).
class NativeStack {
 public:
  NativeStack();
  // Leading frames in these modules are dropped: the collector, CUPTI, the driver, the
  // runtime library (their frames lie between the callback and the program's call).
  void skipModules(const std::vector<std::string>& basenamePrefixes, const void* ownAddress);
  // Modules left out of a launch key as well (cuBLAS and the like: the frames that tell launches
  // apart are their callers'); a site keeps their frames.
  void keyModules(const std::vector<std::string>& basenamePrefixes);
  // Return addresses, innermost first: the caller's frames count `internal` (the function
  // calling capture included), then any leading frames in the skipped modules, are dropped.
  int capture(std::uint64_t* pcs, int max, int internal);
  // The first `max` return addresses past the skipped and key modules, from an unwind bounded
  // to kKeyDepth frames: what a launch key is made of.
  int captureKey(std::uint64_t* pcs, int max, int internal);
  // Module, ELF address and symbol of each (dladdr).
  static void resolve(const std::uint64_t* pcs, int n, std::vector<NativeFrameText>& out);
  const char* unwinder() const { return unwinderName_; }

  static constexpr int kKeyDepth = 40;

 private:
  bool skipped(std::uint64_t pc) const;
  bool keySkipped(std::uint64_t pc) const;
  using Backtrace = int (*)(void**, int);
  Backtrace backtrace_ = nullptr;
  const char* unwinderName_ = "none";
  std::vector<std::pair<std::uint64_t, std::uint64_t>> skip_;     // [lo, hi)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keySkip_;  // [lo, hi)
};

// Python threads waiting in a C call for work other threads launch: the thread that calls
// backward() waits while autograd's engine threads launch the backward kernels. The waiting
// thread enters a scope (its own frames, read once); a launch from a thread with no Python
// frame reads the newest scope with one atomic load and a sequence check.
class Scopes {
 public:
  enum Kind : std::uint8_t { Backward = 1, Other = 2 };
  static constexpr int kSlots = 16;
  static constexpr int kFrames = 64;

  // The calling thread's frames (the innermost `skip` left out) become the newest scope; the
  // slot to leave, or -1 (no Python frames, every slot taken).
  int enter(PythonFrames& python, int kind, int skip);
  void leave(int slot);
  struct View {
    int slot = -1;
    std::uint32_t seq = 0;
    std::uint64_t key = 0;
    std::uint32_t tid = 0;
    std::uint8_t kind = 0;
  };
  // The newest scope still open.
  bool current(View& view) const;
  // Its frames, while it is still the one `view` saw; 0 when it changed since.
  int frames(const View& view, RawPythonFrame* out, int max) const;
  int active() const;

 private:
  struct Slot {
    std::atomic<std::uint32_t> seq{0};  // odd while written
    std::atomic<std::uint64_t> key{0};
    std::atomic<std::uint32_t> tid{0};  // 0: free
    std::atomic<std::uint64_t> order{0};
    std::uint8_t kind = 0;
    int count = 0;
    RawPythonFrame frames[kFrames];
  };
  void pickCurrent();  // under mutex_
  Slot slots_[kSlots];
  std::atomic<int> current_{-1};
  std::uint64_t entered_ = 0;
  std::mutex mutex_;  // enter and leave only
};

// Launch key -> site id, lock-free on the hot path; a new key takes a slot of raw frames.
class SiteTable {
 public:
  SiteTable(PythonFrames& python, NativeStack& native, Scopes& scopes, std::size_t slots = 1 << 16,
            std::size_t pending = 128);
  ~SiteTable();

  struct Lookup {
    std::uint32_t site = 0;  // 0: no site (table full, or no pending slot: drain and ask again)
    bool fresh = false;      // a new site waits in takePending()
    bool noSlot = false;     // every pending slot holds a site not yet taken
    SiteAttribution attribution = SiteAttribution::None;
  };
  // The key: the launch API, what is launched (`launched`: the kernel's host function or
  // CUfunction, 0 when unknown), and the four innermost Python frames (code, instruction) of
  // the launching thread, or of the newest scope when it has none: no unwinding. Without
  // Python frames, its first eight native return addresses past CUDA's modules (an unwind of
  // NativeStack::kKeyDepth frames). Call from the launching thread, inside the launch callback.
  Lookup lookup(std::uint32_t cbid, std::uint16_t domain, const char* api, std::uint64_t launched = 0);
  // New sites not yet taken, oldest first; their slots are free again at `release`.
  void takePending(std::vector<RawSite*>& out);
  void release(const std::vector<RawSite*>& taken);
  std::size_t pendingCount();

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
  Scopes& scopes_;
  std::unique_ptr<Slot[]> slots_;
  std::size_t mask_;
  std::mutex insert_;
  std::uint32_t next_ = 0;
  std::atomic<std::uint64_t> overflowed_{0};
  std::vector<RawSite> pool_;
  std::vector<RawSite*> free_, pending_;  // under insert_
};

}  // namespace strata::cuda::collector
