// The adapter's side of the collector transport: finds the rings of a session's processes in
// the directory it named (STRATA_GPU_DIR), drains them, and hands out GpuRecords, interned
// strings and LaunchSites with session-wide ids. Reads shared memory only, so it works while
// ptrace holds the target stopped.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/cuda/collector/ring_format.hpp"
#include "strata/cuda/device.hpp"
#include "strata/cuda/record.hpp"
#include "strata/cuda/store.hpp"
#include "strata/result.hpp"

namespace strata::cuda {

struct InternedString {
  std::uint32_t id = 0;  // session-wide
  std::string text;
};

// A sticky CUDA error the collector saw at an API's exit (the process's CUDA context is dead
// after it). Ids are session-wide.
struct CudaErrorEvent {
  std::uint32_t pid = 0, tid = 0;
  std::int32_t result = 0;       // 700, 710, 719, ...
  std::uint32_t domain = 0;      // 1 driver API, 2 runtime API
  std::uint32_t cbid = 0;
  std::string api;               // "cudaDeviceSynchronize"
  std::string error;             // "cudaErrorIllegalAddress"
  std::string lastKernel;        // mangled name of the last kernel this thread launched ("" none)
  std::uint32_t lastCorrelation = 0;
  std::uint32_t lastSite = 0;    // LaunchSite id of that launch (0 unknown)
  std::uint64_t time = 0;        // CLOCK_REALTIME ns
  std::uint64_t callerPc = 0;    // first return address outside CUDA and the collector:
  std::string callerModule;      // the program's call, as module and ELF address (look up
  std::uint64_t callerElfAddress = 0;  // callerElfAddress - 1 for the line)
  // callerPc and the frames outside it (module and ELF address), innermost first: with a CUDA
  // runtime linked into the program, the first with a line of its source is the program's call.
  std::vector<NativeFrame> callers;
};

// An NVTX name given to a thread, device, context or stream.
// Hardware metrics of one launch measured at a profile request, or why the request measured
// nothing, decoded once into what the store keeps; and how many launches the request has left.
struct KernelMetricsEvent {
  KernelMetrics metrics;
  std::uint32_t remaining = 0;
};

struct ObjectName {
  std::uint32_t pid = 0;
  std::uint32_t objectKind = 0;  // 1 process, 2 thread, 3 device, 4 context, 5 stream
  std::uint32_t ids[3] = {0, 0, 0};
  std::string name;
};

// What one poll brought; strings and sites come before the records that use them.
struct Batch {
  std::vector<GpuRecord> records;
  std::vector<InternedString> strings;  // new session-wide strings only
  std::vector<LaunchSite> sites;
  std::vector<CudaErrorEvent> errors;
  std::vector<ObjectName> names;
  std::vector<KernelMetricsEvent> metrics;
  std::vector<GraphNodeSite> graphNodes;  // after the sites they name
  std::vector<DeviceProperties> devices;
  void clear();
  bool empty() const;
};

// One collector's state as its ring's header says it.
struct CollectorStatus {
  std::uint32_t pid = 0;
  std::string path;
  ring::State state = ring::State::Starting;
  ring::Mode mode = ring::Mode::Off;
  std::string text;                 // "collecting", "CUPTI is held by ...", a failed call
  std::uint32_t cuptiVersion = 0, builtCuptiVersion = 0;
  std::uint64_t recordsWritten = 0;
  std::uint64_t droppedRecords = 0;   // ring full: exact
  std::uint64_t droppedMessages = 0;
  std::uint64_t cuptiDropped = 0;     // dropped inside CUPTI (buffers full)
  std::uint64_t unjoinedLaunches = 0;
  std::uint64_t sitesOverflowed = 0;
  std::uint32_t cudaErrors = 0;
  std::uint64_t heartbeatNs = 0;
  std::uint64_t createdRealtimeNs = 0, createdMonotonicNs = 0;
  bool alive = false;               // the producer still holds the ring's lock
  std::string problem;              // the reader's own trouble with this ring (corrupt, ...)
};

// What a ring's messages are handed to, with the producer's own ids.
class RingSink {
 public:
  virtual ~RingSink() = default;
  virtual void onRecord(const GpuRecord& record) = 0;
  virtual void onString(std::uint32_t id, std::string_view text) = 0;
  virtual void onSite(const ring::SiteMessage& site, std::span<const ring::PythonFrameWire> python,
                      std::span<const ring::NativeFrameWire> native) = 0;
  virtual void onCudaError(const ring::CudaErrorMessage& error, std::span<const ring::CallerWire> callers) = 0;
  virtual void onObjectName(const ring::ObjectNameMessage& name) = 0;
  virtual void onKernelMetrics(const ring::KernelMetricsMessage& metrics) { (void)metrics; }
  virtual void onGraphNode(const ring::GraphNodeMessage& node) { (void)node; }
  virtual void onDevice(const ring::DeviceMessage& device) { (void)device; }
};

// One ring file, mapped read-write (the reader owns readPos and the flush request word).
class RingReader {
 public:
  // Fails when the file is not a ring of this format; a ring whose producer has not finished
  // making it yet fails with id kNotReady (try again later).
  static constexpr ErrorId kNotReady = errors::kGpuRingNotReady;
  static Result<std::unique_ptr<RingReader>> open(const std::string& path);
  ~RingReader();
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  std::uint32_t pid() const;
  const std::string& path() const { return path_; }
  std::string session() const;

  // Hands every complete message present to `sink`, stopping after `maxRecords` records;
  // returns the number of records. A malformed message (a producer that scribbled on its
  // ring) ends reading this ring for good: the error names the file and the position.
  Result<std::size_t> drain(RingSink& sink, std::size_t maxRecords = SIZE_MAX);
  // Bytes written and not yet read.
  std::uint64_t pending() const;

  CollectorStatus status() const;
  bool producerAlive() const;
  // Asks the collector's flush thread to flush CUPTI now; flushServed() turns true once it has.
  std::uint32_t requestFlush();
  bool flushServed(std::uint32_t request) const;
  // Sleeps until the request is served or the timeout passes.
  bool waitFlushed(std::uint32_t request, std::chrono::milliseconds timeout) const;
  // Asks the collector to measure the next `count` launches (1..kMaxProfileLaunches) of kernels
  // whose names contain `kernel` (at most kProfileKernelSize-1 bytes); replaces a request it has
  // not taken yet. Returns the request's sequence number (the collector's answers carry it).
  std::uint32_t requestProfile(std::string_view kernel, std::uint32_t count);

 private:
  RingReader() = default;
  ring::Header* header_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t capacity_ = 0;
  int fd_ = -1;
  std::string path_;
  std::string corrupt_;  // set once: the reason reading stopped
  std::vector<std::uint8_t> scratch_;
};

// Every ring of one session in one directory.
class SessionReader {
 public:
  // `session` empty: accept rings of any session.
  SessionReader(std::string dir, std::string session);
  ~SessionReader();

  // Opens rings that appeared since the last poll, then drains each (at most `maxRecords`
  // records in all, so a caller can bound its work; the rest wait for the next poll).
  // Fails only when the directory cannot be read; one ring's trouble goes to its status.
  Result<void> poll(Batch& out, std::size_t maxRecords = SIZE_MAX);
  std::vector<CollectorStatus> processes() const;
  // Sum over all rings: records the rings could not hold.
  std::uint64_t droppedRecords() const;

  // Asks every live collector to flush and waits (at most `timeout`) until all have; false
  // when one did not answer in time (a process stopped by a debugger cannot).
  bool flush(std::chrono::milliseconds timeout);
  // The same in two halves, for a caller that must not block (the adapter's event loop):
  // requestFlush asks every live collecting collector and returns how many it asked;
  // flushServed says whether all of those have answered since.
  std::size_t requestFlush();
  bool flushServed() const;

  // Writes the profile request into every live ring (RingReader::requestProfile) and returns
  // how many; rings that appear later get it when they are opened (each process measures
  // `count` launches of its own). A later request replaces it.
  std::size_t requestProfile(std::string_view kernel, std::uint32_t count);

  std::string_view string(std::uint32_t id) const;  // session-wide id; "" when unknown
  const LaunchSite* site(std::uint32_t id) const;

 private:
  struct Ring;
  std::string dir_;
  std::string session_;
  std::map<std::string, std::unique_ptr<Ring>> rings_;  // by file name
  std::map<std::string, std::string> rejected_;         // file name -> why (other session, bad)
  std::vector<std::pair<RingReader*, std::uint32_t>> flushAsked_;  // requestFlush's tickets
  std::string profileKernel_;        // the standing profile request ("" none)
  std::uint32_t profileCount_ = 0;
  std::unordered_map<std::string, std::uint32_t> stringIds_;
  std::vector<std::string> strings_;  // by id; [0] = ""
  std::vector<LaunchSite> sites_;     // by id; [0] = none
  friend class SessionSink;
};

}  // namespace strata::cuda
