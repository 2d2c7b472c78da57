// The pieces of a Kineto trace read from text: times in µs converted to ns exactly, ids
// inside strings, copy and memory kinds from event names, the base time at the file's end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "strata/cuda/record.hpp"

namespace strata::cuda::kineto {

// "1234.567" (µs) -> 1234567 (ns), exactly (decimal arithmetic on the text, never a double);
// rounds half up below 1 ns. False if not a number or out of range.
bool microsToNs(std::string_view text, std::int64_t& out);
// "stream 7" -> 7; "12" -> 12.
bool trailingNumber(std::string_view s, std::int64_t& out);
// "Memcpy HtoD (Pageable -> Device)" -> CopyKind::HtoD.
std::uint8_t copyKindFromName(std::string_view name);
// CUpti_ActivityMemoryKind from "Pageable", "Device", ...
std::uint8_t memoryKind(std::string_view name);
// CUpti_ActivitySynchronizationType from "Stream Sync", "Event Sync", ...
std::uint8_t syncKindFromName(std::string_view name);
// The record an event of category `cat` becomes, and whether it is GPU work: Kineto's
// categories, and torch's own exporter's operators (no category, pid "CPU functions": a
// PyTorch built without Kineto, as Debian's is). nullopt: not kept.
struct EventKind {
  RecordKind kind;
  bool gpu = false;
};
std::optional<EventKind> eventKind(std::string_view cat, std::string_view pidText);
// Kineto writes baseTimeNanoseconds last: read it from the end of a plain file.
std::optional<std::int64_t> baseFromTail(const std::string& path);

}  // namespace strata::cuda::kineto
