// Parsing of the collector's settings (see config.hpp for the variables).
#include "config.hpp"

#include <charconv>
#include <vector>

namespace strata::cuda::collector {
namespace {

Error bad(std::string_view key, std::string_view value, std::string_view expected) {
  return Error{errors::kGpuSetting, std::string(key) + "='" + std::string(value) + "': expected " + std::string(expected), true};
}

Result<unsigned> number(std::string_view key, std::string_view value, unsigned lo, unsigned hi) {
  unsigned n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < lo || n > hi)
    return bad(key, value, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

}  // namespace

Result<void> parseProfileRequest(std::string_view text, std::string_view shown, std::string& kernel, unsigned& count) {
  std::string_view name = text;
  unsigned n = 1;
  if (auto colon = text.rfind(':'); colon != std::string_view::npos && colon + 1 < text.size() &&
                                    text.find_first_not_of("0123456789", colon + 1) == std::string_view::npos) {
    name = text.substr(0, colon);
    auto parsed = number(shown, text.substr(colon + 1), 1, ring::kMaxProfileLaunches);
    if (!parsed) return bad(shown, text, "NAME or NAME:N with N from 1 to " + std::to_string(ring::kMaxProfileLaunches));
    n = *parsed;
  }
  if (name.empty() || name.size() >= ring::kProfileKernelSize)
    return bad(shown, text, "a kernel name or part of one (1 to " + std::to_string(ring::kProfileKernelSize - 1) +
                                " bytes), optionally followed by :N");
  kernel = std::string(name);
  count = n;
  return {};
}

namespace {

// One setting by its short key ("mode"); `shown` is how errors name it.
Result<void> apply(Config& c, std::string_view key, std::string_view value, std::string_view shown) {
  if (key == "mode") {
    if (value == "off") c.mode = ring::Mode::Off;
    else if (value == "trace") c.mode = ring::Mode::Trace;
    else if (value == "stacks") c.mode = ring::Mode::Stacks;
    else return bad(shown, value, "off, trace or stacks");
  } else if (key == "dir") {
    if (value.empty() || value[0] != '/') return bad(shown, value, "an absolute directory");
    c.dir = std::string(value);
  } else if (key == "session") {
    if (value.size() >= ring::kSessionSize) return bad(shown, value, "at most 63 characters");
    c.session = std::string(value);
  } else if (key == "ring_mb") {
    auto n = number(shown, value, 1, 1024);
    if (!n) return n.takeError();
    c.ringBytes = std::size_t{*n} << 20;
  } else if (key == "buffer_mb") {
    auto n = number(shown, value, 8, 4096);
    if (!n) return n.takeError();
    c.bufferTotalBytes = std::size_t{*n} << 20;
  } else if (key == "flush_ms") {
    auto n = number(shown, value, 10, 10000);
    if (!n) return n.takeError();
    c.flushPeriodMs = *n;
  } else if (key == "errors") {
    if (value == "1" || value == "sync") c.errors = Config::Errors::Sync;
    else if (value == "all") c.errors = Config::Errors::All;
    else if (value == "0") c.errors = Config::Errors::Off;
    else return bad(shown, value, "1 (or sync), all or 0");
  } else if (key == "api") {
    if (value == "off") c.api = Config::Api::Off;
    else if (value == "launches") c.api = Config::Api::Launches;
    else if (value == "all") c.api = Config::Api::All;
    else return bad(shown, value, "off, launches or all");
  } else if (key == "graphs") {
    if (value == "nodes") c.graphWhole = false;
    else if (value == "whole") c.graphWhole = true;
    else return bad(shown, value, "nodes or whole");
  } else if (key == "profile") {
    if (auto r = parseProfileRequest(value, shown, c.profileKernel, c.profileCount); !r) return r;
  } else {
    return Error{errors::kGpuSetting, "unknown setting '" + std::string(shown) +
                        "' (known: mode, dir, session, ring_mb, buffer_mb, flush_ms, errors, api, graphs, profile)", true};
  }
  return {};
}

constexpr const char* kKeys[] = {"mode",   "dir", "session", "ring_mb", "buffer_mb", "flush_ms",
                                 "errors", "api", "graphs",  "profile"};

}  // namespace

Result<Config> configFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  Config c;
  for (const char* key : kKeys) {
    std::string var = "STRATA_GPU_";
    for (const char* p = key; *p; ++p) var += static_cast<char>(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    const char* value = getenv(var.c_str());
    if (!value) continue;
    if (auto r = apply(c, key, value, var); !r) return r.takeError();
  }
  return c;
}

Result<Config> parseConfig(std::string_view text, Config base) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ';' || text[i] == '\t' || text[i] == '\n')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != ';' && text[j] != '\t' && text[j] != '\n') ++j;
    if (j == i) break;
    std::string_view word = text.substr(i, j - i);
    auto eq = word.find('=');
    if (eq == std::string_view::npos)
      return Error{errors::kGpuSetting, "setting '" + std::string(word) + "' is not key=value", true};
    std::string_view key = word.substr(0, eq);
    if (auto r = apply(base, key, word.substr(eq + 1), key); !r) return r.takeError();
    i = j;
  }
  return base;
}

}  // namespace strata::cuda::collector
