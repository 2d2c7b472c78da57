// libFuzzer harness for protocol/: framing, envelope parsing, typed decoding and their round trips.
//
// Each input is a byte stream from a peer. It is decoded twice, once whole and once in chunks
// whose sizes come from a hash of the input, because a real connection sees arbitrary read
// boundaries and the result must not depend on them. Every frame then goes through
// parseMessage and, for requests, through every typed argument decoder (the list in
// strata/protocol/requests.hpp, which the unit tests hold the adapter's handlers to), for
// responses and events through every body decoder; whatever decodes must encode and decode
// back to the same JSON. A broken property traps so libFuzzer reports it.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "strata/protocol/framing.hpp"
#include "strata/protocol/debug_types.hpp"
#include "strata/protocol/messages.hpp"
#include "strata/protocol/requests.hpp"
#include "strata/protocol/types.hpp"

namespace {

using namespace strata::protocol;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

struct Decoded {
  std::vector<std::string> frames;
  bool failed = false;
};

Decoded decodeInChunks(std::string_view input, const std::vector<std::size_t>& sizes) {
  Decoded d;
  FrameDecoder decoder;
  std::size_t at = 0, i = 0;
  while (at < input.size()) {
    std::size_t n = std::min(sizes[i++ % sizes.size()], input.size() - at);
    decoder.feed(input.substr(at, n));
    at += n;
    std::string out;
    for (;;) {
      auto status = decoder.next(out);
      if (status == FrameDecoder::Status::Frame) {
        d.frames.push_back(out);
        continue;
      }
      if (status == FrameDecoder::Status::Error) {
        require(!out.empty());  // an error always says why
        d.failed = true;
      }
      break;
    }
    if (d.failed) break;
  }
  return d;
}

// Chunk sizes from an FNV-1a hash of the input: the corpus stays plain DAP streams (no
// header byte reserved for the fuzzer) while every mutation also moves the split points.
std::vector<std::size_t> splitSizes(std::string_view input) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : input) h = (h ^ c) * 1099511628211ull;
  std::vector<std::size_t> sizes;
  for (int i = 0; i < 16; ++i) {
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    // Mostly tiny reads, which split headers and "\r\n\r\n", sometimes large ones.
    sizes.push_back((h & 3) == 0 ? 1 + (h >> 8) % 512 : 1 + (h >> 8) % 7);
  }
  return sizes;
}

// Structural equality that forgives the last bit of a double: Boost.JSON 1.81 parses doubles
// without guaranteed correct rounding, so a serialise/parse trip may move one by an ulp.
bool sameJson(const json::value& a, const json::value& b) {
  auto number = [](const json::value& v, double& out) {
    if (v.is_double()) out = v.get_double();
    else if (v.is_int64()) out = static_cast<double>(v.get_int64());
    else if (v.is_uint64()) out = static_cast<double>(v.get_uint64());
    else return false;
    return true;
  };
  double x = 0, y = 0;
  if (number(a, x) && number(b, y)) {
    if (a.kind() == b.kind() && !a.is_double()) return a == b;
    if (x == y) return true;
    return std::fabs(x - y) <= 1e-14 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const auto &p = a.get_array(), &q = b.get_array();
    if (p.size() != q.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (!sameJson(p[i], q[i])) return false;
    return true;
  }
  if (a.is_object()) {
    const auto &p = a.get_object(), &q = b.get_object();
    if (p.size() != q.size()) return false;
    for (const auto& kv : p) {
      auto it = q.find(kv.key());
      if (it == q.end() || !sameJson(kv.value(), it->value())) return false;
    }
    return true;
  }
  return a == b;
}

// What an encoder wrote must be what it read: every written field comes from the original
// (numbers by value, since 3.0 decodes as 3), or is a container left at its empty default.
// Unknown fields of the original may be dropped; nothing may be invented or altered.
bool writtenFromOriginal(const json::value& written, const json::value& original) {
  if (written.is_object()) {
    if (!original.is_object()) return false;
    for (const auto& kv : written.get_object()) {
      auto it = original.get_object().find(kv.key());
      if (it != original.get_object().end()) {
        if (!writtenFromOriginal(kv.value(), it->value())) return false;
      } else if (!((kv.value().is_array() && kv.value().get_array().empty()) ||
                   (kv.value().is_object() && kv.value().get_object().empty()))) {
        return false;
      }
    }
    return true;
  }
  if (written.is_array()) {
    if (!original.is_array() || written.get_array().size() != original.get_array().size()) return false;
    for (std::size_t i = 0; i < written.get_array().size(); ++i)
      if (!writtenFromOriginal(written.get_array()[i], original.get_array()[i])) return false;
    return true;
  }
  return sameJson(written, original);
}

json::value reparse(const std::string& text) {
  boost::system::error_code ec;
  json::parse_options opts;
  opts.max_depth = 128;  // as deep as parseMessage accepts
  json::value v = json::parse(text, ec, {}, opts);
  require(!ec);
  return v;
}

template <class T>
void roundTrip(const json::value& v, const char* path) {
  auto decoded = decode<T>(v, path);
  if (!decoded) {
    // A refusal must name where the problem is ("arguments.source.path: ...").
    require(decoded.error().message.rfind(path, 0) == 0);
    return;
  }
  json::value first = json::value_from(*decoded);
  require(first.is_object());
  require(writtenFromOriginal(first, v));
  auto again = decode<T>(first, path);
  require(static_cast<bool>(again));
  require(json::value_from(*again) == first);

  auto viaText = decode<T>(reparse(strata::protocol::serialize(first)), path);
  require(static_cast<bool>(viaText));
  require(sameJson(json::value_from(*viaText), first));
}

// Every request's arguments type, from the list the unit tests hold the handlers to.
void decodeArguments(const json::value& args) {
  forEachRequest([&args]<class Args>(RequestKind<Args>) {
    if constexpr (!std::is_void_v<Args>) roundTrip<Args>(args, "arguments");
  });
  // The reverse request Strata sends; a client's own decoder would see these arguments.
  roundTrip<RunInTerminalRequestArguments>(args, "arguments");
}

// Bodies of what a client or the agent link may send back (responses and events), and of
// what Strata answers, which must read back as they were written.
void decodeBody(const json::value& body) {
  roundTrip<RunInTerminalResponseBody>(body, "body");
  roundTrip<Capabilities>(body, "body");
  roundTrip<CapabilitiesEventBody>(body, "body");
  roundTrip<BreakpointsBody>(body, "body");
  roundTrip<ThreadsBody>(body, "body");
  roundTrip<ContinueResponseBody>(body, "body");
  roundTrip<StackTraceBody>(body, "body");
  roundTrip<ScopesBody>(body, "body");
  roundTrip<VariablesBody>(body, "body");
  roundTrip<EvaluateResponseBody>(body, "body");
  roundTrip<SetValueResponseBody>(body, "body");
  roundTrip<CompletionsBody>(body, "body");
  roundTrip<ExceptionInfoResponseBody>(body, "body");
  roundTrip<SourceResponseBody>(body, "body");
  roundTrip<OutputEventBody>(body, "body");
  roundTrip<ExitedEventBody>(body, "body");
  roundTrip<TerminatedEventBody>(body, "body");
  roundTrip<ProcessEventBody>(body, "body");
  roundTrip<StoppedEventBody>(body, "body");
  roundTrip<ContinuedEventBody>(body, "body");
  roundTrip<ThreadEventBody>(body, "body");
  roundTrip<BreakpointEventBody>(body, "body");
}

void exerciseBody(std::string_view body) {
  auto parsed = parseMessage(body);
  if (auto* failure = std::get_if<ParseFailure>(&parsed)) {
    require(!failure->error.message.empty());
    require(!failure->seq || *failure->seq > 0);
    json::value errorJson = errorBody(failure->error);
    require(errorJson.is_object());
    return;
  }
  const Message& message = std::get<Message>(parsed);

  // The envelope survives being written and read back.
  json::value first = toJson(message);
  auto again = parseMessage(strata::protocol::serialize(first));
  require(std::holds_alternative<Message>(again));
  require(sameJson(toJson(std::get<Message>(again)), first));

  if (auto* q = std::get_if<Request>(&message)) decodeArguments(q->arguments);
  else if (auto* r = std::get_if<Response>(&message)) decodeBody(r->body);
  else if (auto* e = std::get_if<Event>(&message)) decodeBody(e->body);
}

// Debuggee output becomes JSON strings through sanitizeUtf8, a pipe read at a time: the result
// must be valid UTF-8 and must not depend on where the reads split a sequence.
void sanitizeInChunks(std::string_view input, const std::vector<std::size_t>& sizes) {
  std::string whole = sanitizeUtf8(input);
  std::string chunked, carry;
  for (std::size_t at = 0, i = 0; at < input.size(); ++i) {
    std::size_t n = std::min(sizes[i % sizes.size()], input.size() - at);
    chunked += sanitizeUtf8(input.substr(at, n), &carry);
    at += n;
  }
  chunked += sanitizeUtf8(carry);
  require(chunked == whole);
  json::value v = reparse(strata::protocol::serialize(json::string(whole)));
  require(v.is_string() && v.get_string() == whole);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  Decoded whole = decodeInChunks(input, {input.size() + 1});
  Decoded chunked = decodeInChunks(input, splitSizes(input));
  require(whole.frames == chunked.frames);
  require(whole.failed == chunked.failed);

  for (const std::string& frame : chunked.frames) {
    FrameDecoder echo;
    echo.feed(encodeFrame(frame));
    std::string out;
    require(echo.next(out) == FrameDecoder::Status::Frame && out == frame);
    exerciseBody(frame);
  }
  sanitizeInChunks(input, splitSizes(input));
  // The bare input as a body too, so mutations reach the JSON layer without having to keep
  // a Content-Length header consistent.
  exerciseBody(input);
  return 0;
}
