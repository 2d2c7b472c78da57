// torch.profiler/Kineto chrome-trace JSON (.json, .json.gz) streamed through Boost.JSON's
// basic_parser (never a whole-document parse): events become GpuRecords in batches, in one
// transaction; times in µs with fractions are converted to ns exactly, from their text.
#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "input.hpp"
#include "kineto_fields.hpp"
#include "kineto_importer.hpp"
#include "strata/cuda/import.hpp"

namespace strata::cuda {

using namespace store_errors;

namespace {

namespace json = boost::json;
using namespace kineto;

enum class Role : std::uint8_t { Skip, Root, Events, Event, Args, Grid, Block, DevList, Dev };
enum class Key : std::uint8_t {
  Other, Ph, Cat, Name, Pid, Tid, Ts, Dur, Id, Bp, Args, TraceEvents, DeviceProperties, BaseTime,
  ExternalId, Correlation, Device, Context, Stream, Registers, SharedMemory, Bytes, Grid, Block, SequenceNumber
};

Key classify(Role role, std::string_view k) {
  switch (role) {
    case Role::Event:
      if (k == "ph") return Key::Ph;
      if (k == "cat") return Key::Cat;
      if (k == "name") return Key::Name;
      if (k == "pid") return Key::Pid;
      if (k == "tid") return Key::Tid;
      if (k == "ts") return Key::Ts;
      if (k == "dur") return Key::Dur;
      if (k == "id") return Key::Id;
      if (k == "bp") return Key::Bp;
      if (k == "args") return Key::Args;
      return Key::Other;
    case Role::Args:
      if (k == "External id") return Key::ExternalId;
      if (k == "Sequence number") return Key::SequenceNumber;
      if (k == "correlation") return Key::Correlation;
      if (k == "device") return Key::Device;
      if (k == "context") return Key::Context;
      if (k == "stream") return Key::Stream;
      if (k == "registers per thread") return Key::Registers;
      if (k == "shared memory") return Key::SharedMemory;
      if (k == "bytes") return Key::Bytes;
      if (k == "grid") return Key::Grid;
      if (k == "block") return Key::Block;
      if (k == "name") return Key::Name;
      return Key::Other;
    case Role::Root:
      if (k == "traceEvents") return Key::TraceEvents;
      if (k == "deviceProperties") return Key::DeviceProperties;
      if (k == "baseTimeNanoseconds") return Key::BaseTime;
      return Key::Other;
    default:
      return Key::Other;
  }
}

class Handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  explicit Handler(Importer& imp) : imp_(imp) { stack_.reserve(32); }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }

  bool on_object_begin(json::error_code& ec) {
    Role role = Role::Skip;
    if (stack_.empty()) {
      role = Role::Root;
    } else {
      Role parent = stack_.back();
      if (parent == Role::Events) {
        role = Role::Event;
        ev_.clear();
      } else if (parent == Role::Event && key_ == Key::Args) {
        role = Role::Args;
      } else if (parent == Role::DevList) {
        role = Role::Dev;
        dev_ = DeviceProperties{.source = "kineto"};
      }
    }
    (void)ec;
    stack_.push_back(role);
    return true;
  }

  bool on_object_end(std::size_t, json::error_code& ec) {
    Role role = stack_.back();
    stack_.pop_back();
    if (role == Role::Event) {
      bool ok = imp_.event(ev_);
      ++imp_.eventIndex;
      if (!ok) return fail(ec, nullptr);
    } else if (role == Role::Dev) {
      if (!imp_.device(dev_)) return fail(ec, nullptr);
    }
    key_ = Key::Other;
    return true;
  }

  bool on_array_begin(json::error_code&) {
    Role role = Role::Skip;
    if (stack_.empty()) {
      role = Role::Events;  // the JSON Array Format: a bare list of events
    } else {
      Role parent = stack_.back();
      if (parent == Role::Root && key_ == Key::TraceEvents) role = Role::Events;
      else if (parent == Role::Root && key_ == Key::DeviceProperties) role = Role::DevList;
      else if (parent == Role::Args && key_ == Key::Grid) role = Role::Grid;
      else if (parent == Role::Args && key_ == Key::Block) role = Role::Block;
    }
    if (role == Role::Events) imp_.sawEvents = true;
    if (role == Role::Grid || role == Role::Block) arrayIndex_ = 0;
    stack_.push_back(role);
    return true;
  }

  bool on_array_end(std::size_t, json::error_code&) {
    stack_.pop_back();
    return true;
  }

  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    keyText_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    std::string_view k(s.data(), s.size());
    if (!keyText_.empty()) {
      keyText_.append(s.data(), s.size());
      k = keyText_;
    }
    Role role = stack_.back();
    key_ = classify(role, k);
    if (role == Role::Dev) devKey_.assign(k);
    keyText_.clear();
    return true;
  }

  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
    std::string_view v(s.data(), s.size());
    if (!text_.empty()) {
      text_.append(s.data(), s.size());
      v = text_;
    }
    bool ok = string(v, ec);
    text_.clear();
    return ok;
  }

  bool on_number_part(json::string_view s, json::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view s, json::error_code& ec) { return number(i, true, s, ec); }
  bool on_uint64(std::uint64_t u, json::string_view s, json::error_code& ec) {
    return number(static_cast<std::int64_t>(std::min<std::uint64_t>(u, INT64_MAX)), true, s, ec);
  }
  bool on_double(double d, json::string_view s, json::error_code& ec) {
    return number(static_cast<std::int64_t>(d), false, s, ec);
  }
  bool on_bool(bool, json::error_code&) {
    advanceArray();
    return true;
  }
  bool on_null(json::error_code&) {
    advanceArray();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  bool fail(json::error_code& ec, const char* what) {
    if (what && imp_.error.empty()) imp_.error = what;
    ec = json::error::exception;
    return false;
  }
  std::string eventWhere() const { return "traceEvents[" + std::to_string(imp_.eventIndex) + "]"; }

  void advanceArray() {
    if (!stack_.empty() && (stack_.back() == Role::Grid || stack_.back() == Role::Block)) ++arrayIndex_;
  }

  bool string(std::string_view v, json::error_code& ec) {
    Role role = stack_.back();
    if (role == Role::Event) {
      switch (key_) {
        case Key::Ph: ev_.ph.assign(v); break;
        case Key::Cat: ev_.cat.assign(v); break;
        case Key::Name: ev_.name.assign(v); break;
        case Key::Pid:
          ev_.pidNum = trailingNumber(v, ev_.pid);
          ev_.pidText.assign(v);
          break;
        case Key::Tid: ev_.tidNum = trailingNumber(v, ev_.tid); break;
        case Key::Id: {
          std::int64_t id = 0;
          ev_.hasId = trailingNumber(v, id);
          ev_.id = static_cast<std::uint64_t>(id);
          break;
        }
        case Key::Ts:
        case Key::Dur:
          imp_.error = eventWhere() + ": \"" + (key_ == Key::Ts ? "ts" : "dur") + "\" is a string, not a number";
          return fail(ec, nullptr);
        default: break;
      }
    } else if (role == Role::Args && key_ == Key::Name) {
      ev_.argName.assign(v);
    } else if (role == Role::Dev && devKey_ == "name") {
      dev_.name.assign(v);
    }
    advanceArray();
    return true;
  }

  bool number(std::int64_t i, bool integral, json::string_view last, json::error_code& ec) {
    std::string_view text(last.data(), last.size());
    if (!number_.empty()) {
      number_.append(last.data(), last.size());
      text = number_;
    }
    bool ok = true;
    Role role = stack_.back();
    switch (role) {
      case Role::Event:
        switch (key_) {
          case Key::Ts:
          case Key::Dur: {
            std::int64_t ns;
            if (!microsToNs(text, ns)) {
              imp_.error = eventWhere() + ": \"" + (key_ == Key::Ts ? "ts" : "dur") + "\" " + std::string(text) + " is out of range";
              ok = false;
              break;
            }
            if (key_ == Key::Ts) ev_.ts = ns, ev_.hasTs = true;
            else ev_.dur = ns, ev_.hasDur = true;
            break;
          }
          case Key::Pid: ev_.pid = i, ev_.pidNum = true; break;
          case Key::Tid: ev_.tid = i, ev_.tidNum = true; break;
          case Key::Id: ev_.id = static_cast<std::uint64_t>(i), ev_.hasId = true; break;
          default: break;
        }
        break;
      case Role::Args:
        if (!integral) break;
        switch (key_) {
          case Key::ExternalId: ev_.externalId = static_cast<std::uint64_t>(i); break;
          case Key::SequenceNumber: ev_.sequence = i; break;
          case Key::Correlation: ev_.correlation = static_cast<std::uint64_t>(i); break;
          case Key::Device: ev_.device = i; break;
          case Key::Context: ev_.context = i; break;
          case Key::Stream: ev_.stream = i; break;
          case Key::Registers: ev_.registers = static_cast<std::uint64_t>(i); break;
          case Key::SharedMemory: ev_.sharedMemory = static_cast<std::uint64_t>(i); break;
          case Key::Bytes: ev_.bytes = static_cast<std::uint64_t>(i); break;
          default: break;
        }
        break;
      case Role::Grid:
      case Role::Block:
        if (arrayIndex_ < 3) (role == Role::Grid ? ev_.grid : ev_.block)[arrayIndex_] = static_cast<std::int32_t>(i);
        break;
      case Role::Root:
        if (key_ == Key::BaseTime && integral) imp_.setBase(i);
        break;
      case Role::Dev:
        deviceField(i);
        break;
      default:
        break;
    }
    number_.clear();
    advanceArray();
    return ok ? true : fail(ec, nullptr);
  }

  void deviceField(std::int64_t v) {
    const std::string& k = devKey_;
    auto u = static_cast<std::uint64_t>(v);
    auto n = static_cast<int>(v);
    if (k == "id") dev_.device = static_cast<std::uint32_t>(v);
    else if (k == "totalGlobalMem") dev_.totalGlobalMem = u;
    else if (k == "computeMajor") dev_.computeMajor = n;
    else if (k == "computeMinor") dev_.computeMinor = n;
    else if (k == "maxThreadsPerBlock") dev_.maxThreadsPerBlock = n;
    else if (k == "maxThreadsPerMultiprocessor") dev_.maxThreadsPerMultiprocessor = n;
    else if (k == "maxBlocksPerMultiprocessor" || k == "maxBlocksPerMultiProcessor") dev_.maxBlocksPerMultiprocessor = n;
    else if (k == "regsPerBlock") dev_.regsPerBlock = n;
    else if (k == "regsPerMultiprocessor") dev_.regsPerMultiprocessor = n;
    else if (k == "warpSize") dev_.warpSize = n;
    else if (k == "sharedMemPerBlock") dev_.sharedMemPerBlock = u;
    else if (k == "sharedMemPerMultiprocessor") dev_.sharedMemPerMultiprocessor = u;
    else if (k == "sharedMemPerBlockOptin") dev_.sharedMemPerBlockOptin = u;
    else if (k == "reservedSharedMemPerBlock") dev_.reservedSharedMemPerBlock = u;
    else if (k == "numSms" || k == "multiProcessorCount") dev_.smCount = n;
  }

  Importer& imp_;
  std::vector<Role> stack_;
  Key key_ = Key::Other;
  std::string keyText_, text_, number_, devKey_;
  Event ev_;
  DeviceProperties dev_;
  std::size_t arrayIndex_ = 0;
};

}  // namespace

Result<ImportReport> importKineto(const std::string& path, Store& store, const ImportProgress& progress) {
  auto file = input::File::open(path);
  if (!file) return file.takeError();
  ImportReport report;
  report.format = (*file)->gzip() ? TraceFormat::KinetoJsonGz : TraceFormat::KinetoJson;
  Result<void> result = store.atomically([&]() -> Result<void> {
    Importer imp(store, report);
    if (!(*file)->gzip()) imp.base = baseFromTail(path);
    json::parse_options opt;
    opt.max_depth = 64;
    opt.allow_trailing_commas = true;
    opt.allow_invalid_utf8 = true;
    json::basic_parser<Handler> parser(opt, imp);
    std::vector<char> buf(1 << 20);
    std::uint64_t offset = 0;
    auto where = [&](std::uint64_t at) {
      auto [line, column] = input::lineColumn(path, at);
      return path + ": " + ((*file)->gzip() ? "decompressed byte " : "byte ") + std::to_string(at) + " (line " +
             std::to_string(line) + ", column " + std::to_string(column) + ")";
    };
    for (;;) {
      auto got = (*file)->read(buf.data(), buf.size());
      if (!got) return got.takeError();
      std::size_t used = 0;
      if (!parser.done()) {
        json::error_code ec;
        used = parser.write_some(*got != 0, buf.data(), *got, ec);
        if (ec) {
          std::string msg = imp.error.empty() ? ec.message() : imp.error;
          if (*got == 0 && imp.error.empty()) msg = "the JSON ends early (a truncated file?): " + msg;
          return Error{kMalformed, where(offset + used) + ": " + msg, true};
        }
      }
      if (*got == 0) break;
      if (progress && !progress((*file)->consumed(), (*file)->size())) return importCancelled(path);
      // Only whitespace may follow the document.
      for (std::size_t i = used; parser.done() && i < *got; ++i) {
        char c = buf[i];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
          return Error{kMalformed, where(offset + i) + ": data after the end of the JSON document", true};
        }
      }
      offset += *got;
    }
    if (!imp.sawEvents) return Error{kMalformed, path + ": no traceEvents array (not a Chrome/Kineto trace)", true};
    return imp.finish();
  });
  if (!result) return result.takeError();
  return report;
}

}  // namespace strata::cuda
