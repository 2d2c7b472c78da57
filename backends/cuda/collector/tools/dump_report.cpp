// strata_gpu_dump's tallies and their text and JSON forms.
#include "strata/cuda_frames.hpp"
#include "strata/demangle.hpp"
#include "dump_report.hpp"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace strata::cuda::dump {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string where(const LineResolver::Where& w) {
  if (w.file.empty()) return w.function;
  return w.function + " (" + w.file + ":" + std::to_string(w.line) + ")";
}

}  // namespace

// ---- LineResolver -----------------------------------------------------------------------

struct LineResolver::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  ~Module() {
    if (dwfl) dwfl_end(dwfl);
  }
};

LineResolver::LineResolver() = default;
LineResolver::~LineResolver() = default;

LineResolver::Where LineResolver::resolve(const std::string& path, std::uint64_t elfAddress, bool returnAddress) {
  Where w;
  if (path.empty() || elfAddress == 0) return w;
  auto& slot = modules_[path];
  if (!slot) {
    slot = std::make_unique<Module>();
    static const Dwfl_Callbacks callbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                             dwfl_offline_section_address, nullptr};
    slot->dwfl = dwfl_begin(&callbacks);
    if (slot->dwfl) {
      // Base 0: the module's addresses are its ELF addresses, which is what the ring carries.
      slot->module = dwfl_report_elf(slot->dwfl, path.c_str(), path.c_str(), -1, 0, false);
      dwfl_report_end(slot->dwfl, nullptr, nullptr);
    }
  }
  if (!slot->module) return w;
  Dwarf_Addr bias = 0;
  dwfl_module_getelf(slot->module, &bias);
  const Dwarf_Addr addr = elfAddress - (returnAddress ? 1 : 0) + bias;
  if (const char* name = dwfl_module_addrname(slot->module, addr)) w.function = demangle(name);
  if (Dwfl_Line* line = dwfl_module_getsrc(slot->module, addr)) {
    int lineno = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
      w.file = file;
      w.line = lineno;
    }
  }
  return w;
}

// ---- Report -----------------------------------------------------------------------------

namespace {
// The overlap count looks at the first copies and kernels only: enough for the examples, and
// its pairwise test stays cheap for any trace.
constexpr std::size_t kMaxSpans = 4096;
}  // namespace

// Of the first kMaxSpans copies, those that ran while one of the first kMaxSpans kernels of the
// same process ran on another stream.
std::uint64_t Report::copiesOverlappingKernels() const {
  std::uint64_t n = 0;
  for (const Span& c : copySpans_)
    for (const Span& k : kernelSpans_)
      if (c.pid == k.pid && c.stream != k.stream && c.start < k.end && k.start < c.end) {
        ++n;
        break;
      }
  return n;
}

void Report::add(const Batch& batch, const SessionReader& reader) {
  for (const auto& site : batch.sites) sites_[site.id] = site;
  graphNodes_.insert(graphNodes_.end(), batch.graphNodes.begin(), batch.graphNodes.end());
  for (const auto& e : batch.errors) errors_.push_back(e);
  for (const GpuRecord& r : batch.records) {
    ++counts_[r.kind];
    if (r.start == 0 || r.end == 0) ++zeroTimes_;
    if (r.start && r.start < lastStart_) ++outOfOrder_;
    if (r.start) lastStart_ = r.start;
    if (r.start && (startNs_ == 0 || r.start < startNs_)) startNs_ = r.start;
    endNs_ = std::max(endNs_, r.end);
    switch (r.kind) {
      case RecordKind::Kernel: {
        if (r.start && r.end && kernelSpans_.size() < kMaxSpans) kernelSpans_.push_back({r.start, r.end, r.pid, r.stream});
        KernelStat& k = kernels_[r.name];
        if (k.name.empty()) k.name = std::string(reader.string(r.name));
        ++k.count;
        if (r.end > r.start) k.totalNs += r.end - r.start;
        ++k.sites[r.site];
        break;
      }
      case RecordKind::Memcpy:
        copyBytes_ += r.bytes;
        if (r.start && r.end && copySpans_.size() < kMaxSpans) copySpans_.push_back({r.start, r.end, r.pid, r.stream});
        break;
      case RecordKind::RuntimeApi:
      case RecordKind::DriverApi: {
        ApiStat& a = apis_[r.name];
        if (a.name.empty()) a.name = std::string(reader.string(r.name));
        ++a.count;
        if (r.result != 0) ++a.failed;
        break;
      }
      case RecordKind::Marker:
        ++markers_[std::string(reader.string(r.name))];
        break;
      default:
        break;
    }
  }
}

namespace {

// The program's call that got the error: the first caller with a line of the program's own
// source (a CUDA runtime linked into the program has none), else callerPc's.
LineResolver::Where caller(const CudaErrorEvent& e, LineResolver& lines) {
  for (const NativeFrame& f : e.callers) {
    auto w = lines.resolve(f.module, f.elfAddress);
    if (!w.file.empty() && !cuda_frames::isCudaHeader(w.file) && !cuda_frames::isRuntimeFunction(w.function)) return w;
  }
  return lines.resolve(e.callerModule, e.callerElfAddress);
}

}  // namespace

void Report::printText(std::FILE* out, const std::vector<CollectorStatus>& processes, LineResolver& lines) const {
  std::fprintf(out, "== strata_gpu_dump: %zu process(es) with a ring\n", processes.size());
  for (const auto& p : processes) {
    std::fprintf(out, "process %u: %s: %s\n", p.pid, ring::stateName(p.state), p.text.c_str());
    std::fprintf(out, "  records %llu, dropped %llu (ring) + %llu (CUPTI), unjoined launches %llu, CUDA errors %u%s%s\n",
                 static_cast<unsigned long long>(p.recordsWritten), static_cast<unsigned long long>(p.droppedRecords),
                 static_cast<unsigned long long>(p.cuptiDropped), static_cast<unsigned long long>(p.unjoinedLaunches),
                 p.cudaErrors, p.problem.empty() ? "" : "; reader: ", p.problem.c_str());
  }
  std::fprintf(out, "counts:");
  for (const auto& [kind, n] : counts_) std::fprintf(out, " %s %llu", std::string(recordKindName(kind)).c_str(), static_cast<unsigned long long>(n));
  std::fprintf(out, "; copied %llu bytes; %llu copies overlapped a kernel on another stream\n",
               static_cast<unsigned long long>(copyBytes_), static_cast<unsigned long long>(copiesOverlappingKernels()));
  std::vector<const KernelStat*> ks;
  for (const auto& [id, k] : kernels_) ks.push_back(&k);
  std::sort(ks.begin(), ks.end(), [](auto* a, auto* b) { return a->totalNs > b->totalNs; });
  if (!ks.empty()) std::fprintf(out, "kernels (launches, total ns, name, sites):\n");
  for (const KernelStat* k : ks) {
    std::fprintf(out, "  %8llu %12llu  %s\n", static_cast<unsigned long long>(k->count),
                 static_cast<unsigned long long>(k->totalNs), demangle(k->name).c_str());
    for (const auto& [site, n] : k->sites)
      std::fprintf(out, "           %llu from site %u\n", static_cast<unsigned long long>(n), site);
  }
  if (!apis_.empty()) std::fprintf(out, "API calls:");
  for (const auto& [id, a] : apis_) std::fprintf(out, " %s %llu", a.name.c_str(), static_cast<unsigned long long>(a.count));
  if (!apis_.empty()) std::fprintf(out, "\n");
  for (const auto& [name, n] : markers_) std::fprintf(out, "NVTX %s: %llu\n", name.c_str(), static_cast<unsigned long long>(n));
  for (const auto& [id, site] : sites_) {
    std::fprintf(out, "site %u (process %u, %s%s):\n", id, site.pid, site.api.c_str(),
                 site.attribution == SiteAttribution::Caller
                     ? (", Python frames of thread " + std::to_string(site.callerTid) + ", which waited for it").c_str()
                     : "");
    for (const auto& f : site.python) std::fprintf(out, "  py  %s (%s:%d)\n", f.function.c_str(), f.file.c_str(), f.line);
    for (const auto& f : site.nativeFrames) {
      auto w = lines.resolve(f.module, f.elfAddress);
      std::fprintf(out, "  c   %s  [%s+0x%llx]\n", w.function.empty() ? f.symbol.c_str() : where(w).c_str(),
                   f.module.c_str(), static_cast<unsigned long long>(f.elfAddress));
    }
  }
  for (const auto& e : errors_) {
    auto w = caller(e, lines);
    std::fprintf(out, "CUDA error in process %u thread %u: %s returned %s (%d); last kernel %s; called from %s\n",
                 e.pid, e.tid, e.api.c_str(), e.error.c_str(), e.result,
                 e.lastKernel.empty() ? "(none)" : demangle(e.lastKernel).c_str(), where(w).c_str());
  }
}

std::string Report::json(const std::vector<CollectorStatus>& processes, int exitCode, const std::string& dir,
                         LineResolver& lines) const {
  std::string j = "{\"exitCode\":" + std::to_string(exitCode) + ",\"dir\":" + quote(dir) + ",\"processes\":[";
  bool first = true;
  for (const auto& p : processes) {
    j += first ? "" : ",";
    first = false;
    j += "{\"pid\":" + std::to_string(p.pid) + ",\"state\":" + quote(ring::stateName(p.state)) +
         ",\"mode\":" + quote(ring::modeName(p.mode)) + ",\"status\":" + quote(p.text) +
         ",\"recordsWritten\":" + std::to_string(p.recordsWritten) + ",\"droppedRecords\":" +
         std::to_string(p.droppedRecords) + ",\"droppedMessages\":" + std::to_string(p.droppedMessages) +
         ",\"cuptiDropped\":" + std::to_string(p.cuptiDropped) + ",\"unjoinedLaunches\":" +
         std::to_string(p.unjoinedLaunches) + ",\"sitesOverflowed\":" + std::to_string(p.sitesOverflowed) +
         ",\"cudaErrors\":" + std::to_string(p.cudaErrors) + ",\"cuptiVersion\":" + std::to_string(p.cuptiVersion) +
         ",\"problem\":" + quote(p.problem) + "}";
  }
  j += "],\"counts\":{";
  first = true;
  for (const auto& [kind, n] : counts_) {
    j += (first ? "" : ",") + quote(std::string(recordKindName(kind))) + ":" + std::to_string(n);
    first = false;
  }
  j += "},\"copyBytes\":" + std::to_string(copyBytes_) + ",\"timeSpan\":{\"startNs\":" + std::to_string(startNs_) +
       ",\"endNs\":" + std::to_string(endNs_) + "},\"zeroTimes\":" + std::to_string(zeroTimes_) +
       ",\"outOfOrder\":" + std::to_string(outOfOrder_) + ",\"copiesOverlappingKernels\":" +
       std::to_string(copiesOverlappingKernels()) + ",\"kernels\":[";
  first = true;
  for (const auto& [id, k] : kernels_) {
    j += first ? "" : ",";
    first = false;
    j += "{\"name\":" + quote(k.name) + ",\"demangled\":" + quote(demangle(k.name)) + ",\"count\":" +
         std::to_string(k.count) + ",\"totalNs\":" + std::to_string(k.totalNs) + ",\"sites\":[";
    bool f2 = true;
    for (const auto& [site, n] : k.sites) {
      j += (f2 ? "" : ",") + std::string("{\"site\":") + std::to_string(site) + ",\"count\":" + std::to_string(n) + "}";
      f2 = false;
    }
    j += "]}";
  }
  j += "],\"apis\":[";
  first = true;
  for (const auto& [id, a] : apis_) {
    j += (first ? "" : ",") + std::string("{\"name\":") + quote(a.name) + ",\"count\":" + std::to_string(a.count) +
         ",\"failed\":" + std::to_string(a.failed) + "}";
    first = false;
  }
  j += "],\"markers\":[";
  first = true;
  for (const auto& [name, n] : markers_) {
    j += (first ? "" : ",") + std::string("{\"name\":") + quote(name) + ",\"count\":" + std::to_string(n) + "}";
    first = false;
  }
  j += "],\"sites\":[";
  first = true;
  for (const auto& [id, site] : sites_) {
    j += first ? "" : ",";
    first = false;
    j += "{\"id\":" + std::to_string(id) + ",\"pid\":" + std::to_string(site.pid) + ",\"api\":" + quote(site.api) +
         ",\"attribution\":" + quote(std::string(siteAttributionName(site.attribution))) + ",\"callerTid\":" + std::to_string(site.callerTid) + ",\"python\":[";
    bool f2 = true;
    for (const auto& f : site.python) {
      j += (f2 ? "" : ",") + std::string("{\"function\":") + quote(f.function) + ",\"file\":" + quote(f.file) +
           ",\"line\":" + std::to_string(f.line) + "}";
      f2 = false;
    }
    j += "],\"native\":[";
    f2 = true;
    for (const auto& f : site.nativeFrames) {
      auto w = lines.resolve(f.module, f.elfAddress);
      j += (f2 ? "" : ",") + std::string("{\"pc\":") + std::to_string(f.pc) + ",\"module\":" + quote(f.module) +
           ",\"elfAddress\":" + std::to_string(f.elfAddress) + ",\"symbol\":" + quote(f.symbol) +
           ",\"function\":" + quote(w.function) + ",\"file\":" + quote(w.file) + ",\"line\":" + std::to_string(w.line) + "}";
      f2 = false;
    }
    j += "]}";
  }
  j += "],\"graphNodes\":[";
  first = true;
  for (const auto& g : graphNodes_) {
    j += (first ? "" : ",") + std::string("{\"node\":") + std::to_string(g.node) + ",\"site\":" +
         std::to_string(g.site) + ",\"origin\":" + quote(g.origin) + "}";
    first = false;
  }
  j += "],\"errors\":[";
  first = true;
  for (const auto& e : errors_) {
    auto w = caller(e, lines);
    j += first ? "" : ",";
    first = false;
    j += "{\"pid\":" + std::to_string(e.pid) + ",\"tid\":" + std::to_string(e.tid) + ",\"api\":" + quote(e.api) +
         ",\"error\":" + quote(e.error) + ",\"result\":" + std::to_string(e.result) + ",\"lastKernel\":" +
         quote(e.lastKernel) + ",\"lastSite\":" + std::to_string(e.lastSite) + ",\"caller\":{\"module\":" +
         quote(e.callerModule) + ",\"function\":" + quote(w.function) + ",\"file\":" + quote(w.file) +
         ",\"line\":" + std::to_string(w.line) + "}}";
  }
  j += "]}\n";
  return j;
}

}  // namespace strata::cuda::dump
