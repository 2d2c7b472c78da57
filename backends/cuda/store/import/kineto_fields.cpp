// Kineto trace fields read from text (see kineto_fields.hpp).
#include "kineto_fields.hpp"

#include <cstdio>
#include <utility>

namespace strata::cuda::kineto {

bool microsToNs(std::string_view t, std::int64_t& out) {
  std::size_t i = 0;
  bool neg = false;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  unsigned __int128 mant = 0;
  int exp10 = 3;  // µs -> ns
  int significant = 0;
  bool digits = false, dot = false;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c >= '0' && c <= '9') {
      digits = true;
      if (significant < 36) {
        mant = mant * 10 + static_cast<unsigned>(c - '0');
        if (mant) ++significant;
        if (dot) --exp10;
      } else if (!dot) {
        ++exp10;  // an integer digit past what is kept: only the magnitude matters
      }
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) eneg = t[i++] == '-';
    int e = 0;
    bool any = false;
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      any = true;
      if (e < 10000) e = e * 10 + (t[i] - '0');
    }
    if (!any) return false;
    exp10 += eneg ? -e : e;
  }
  if (i != t.size()) return false;
  constexpr auto kMax = static_cast<unsigned __int128>(INT64_MAX);
  if (exp10 >= 0) {
    for (; exp10 > 0 && mant; --exp10) {
      if (mant > kMax) return false;
      mant *= 10;
    }
  } else {
    for (; exp10 < -1 && mant; ++exp10) mant /= 10;
    if (exp10 == -1) mant = mant / 10 + (mant % 10 >= 5 ? 1 : 0);
  }
  if (mant > kMax) return false;
  out = neg ? -static_cast<std::int64_t>(mant) : static_cast<std::int64_t>(mant);
  return true;
}

// "stream 7" -> 7; "12" -> 12.
bool trailingNumber(std::string_view s, std::int64_t& out) {
  std::size_t e = s.size();
  while (e > 0 && s[e - 1] == ' ') --e;
  std::size_t b = e;
  while (b > 0 && s[b - 1] >= '0' && s[b - 1] <= '9') --b;
  if (b == e || e - b > 18) return false;
  out = 0;
  for (std::size_t i = b; i < e; ++i) out = out * 10 + (s[i] - '0');
  return true;
}

std::uint8_t copyKindFromName(std::string_view n) {
  static constexpr std::pair<std::string_view, std::uint8_t> kinds[] = {
      {"HtoD", 1}, {"DtoH", 2}, {"HtoA", 3}, {"AtoH", 4}, {"AtoA", 5}, {"AtoD", 6}, {"DtoA", 7}, {"DtoD", 8},
      {"HtoH", 9}, {"PtoP", 10}};
  for (auto& [k, v] : kinds) {
    if (n.find(k) != std::string_view::npos) return v;
  }
  return 0;
}

// CUpti_ActivityMemoryKind from Kineto's "(Pageable -> Device)".
std::uint8_t memoryKind(std::string_view n) {
  if (n.starts_with("Pageable")) return 1;
  if (n.starts_with("Pinned")) return 2;
  if (n.starts_with("Device Static")) return 6;
  if (n.starts_with("Managed Static")) return 7;
  if (n.starts_with("Device")) return 3;
  if (n.starts_with("Array")) return 4;
  if (n.starts_with("Managed")) return 5;
  return 0;
}

std::uint8_t syncKindFromName(std::string_view n) {
  if (n.find("Wait") != std::string_view::npos) return 2;
  if (n.find("Event") != std::string_view::npos) return 1;
  if (n.find("Stream") != std::string_view::npos) return 3;
  if (n.find("Context") != std::string_view::npos || n.find("Device") != std::string_view::npos) return 4;
  return 0;
}

std::optional<std::int64_t> baseFromTail(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string tail(4096, '\0');
  std::optional<std::int64_t> out;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long size = std::ftell(f);
    long from = size > 4096 ? size - 4096 : 0;
    std::fseek(f, from, SEEK_SET);
    tail.resize(std::fread(tail.data(), 1, tail.size(), f));
    auto at = tail.rfind("\"baseTimeNanoseconds\"");
    if (at != std::string::npos) {
      std::size_t i = tail.find(':', at);
      if (i != std::string::npos) {
        ++i;
        while (i < tail.size() && (tail[i] == ' ' || tail[i] == '\n' || tail[i] == '\r' || tail[i] == '\t')) ++i;
        std::int64_t v = 0;
        std::size_t b = i;
        while (i < tail.size() && tail[i] >= '0' && tail[i] <= '9' && i - b < 19) v = v * 10 + (tail[i++] - '0');
        if (i > b) out = v;
      }
    }
  }
  std::fclose(f);
  return out;
}


std::optional<EventKind> eventKind(std::string_view cat, std::string_view pidText) {
  if (cat == "kernel" || cat == "Kernel") return EventKind{RecordKind::Kernel, true};
  if (cat == "gpu_memcpy" || cat == "Memcpy") return EventKind{RecordKind::Memcpy, true};
  if (cat == "gpu_memset" || cat == "Memset") return EventKind{RecordKind::Memset, true};
  if (cat == "cuda_sync") return EventKind{RecordKind::Synchronization, true};
  if (cat == "cuda_runtime" || cat == "Runtime") return EventKind{RecordKind::RuntimeApi};
  if (cat == "cuda_driver" || cat == "Driver") return EventKind{RecordKind::DriverApi};
  if (cat == "cpu_op" || cat == "Operator" || cat == "python_function") return EventKind{RecordKind::CpuOp};
  if (cat == "user_annotation" || cat == "cpu_instant_event") return EventKind{RecordKind::Marker};
  if (cat == "gpu_user_annotation") return EventKind{RecordKind::Marker, true};
  if (cat == "overhead") return EventKind{RecordKind::Overhead};
  // torch's own exporter (a PyTorch built without Kineto, as Debian's is: torch.profiler then
  // writes a bare array of operators, no categories, under the pid "CPU functions").
  if (cat.empty() && pidText == "CPU functions") return EventKind{RecordKind::CpuOp};
  return std::nullopt;
}

}  // namespace strata::cuda::kineto
