// libFuzzer harness over a whole session: the input is what a client sends.
//
// The bytes go through the real Connection into a real Session (its dispatcher, handlers and
// id tables), whose backend is the fake in fake_backend.hpp, and what the session writes is
// held to what a client relies on:
//  - every request with a usable seq gets exactly one response, with that request_seq and its
//    command, unless the fake never answered the backend call it waits on, still held that
//    reply when the connection closed, or the client never answered the runInTerminal the
//    launch waits on (a cancelled launch is answered "cancelled", and only once);
//  - nothing precedes the initialize response but error responses (no event, no reverse
//    request), and there is one successful initialize response at most;
//  - every message is Content-Length framed, a JSON object whose seq counts up from 1, that
//    the protocol's own reader accepts, and whose body decodes into its command's or event's
//    typed struct;
//  - the session ends when the client goes away, and nothing keeps it alive afterwards; no
//    crash, sanitizer report or leak on the way.
// The input is cut into reads at points hashed from it and at every frame end, so a read
// completes at most one request and the fake knows which request each of its calls serves.
// STRATA_FUZZ_TRACE=1 prints the exchange and the fake's decisions (for reading a seed).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "adapter/session.hpp"
#include "fake_backend.hpp"
#include "fake_gpu.hpp"
#include "strata/protocol/debug_types.hpp"
#include "strata/protocol/framing.hpp"
#include "strata/protocol/messages.hpp"
#include "strata/protocol/transport.hpp"
#include "strata/protocol/types.hpp"

namespace {

using namespace strata;
namespace asio = boost::asio;
namespace json = boost::json;
using fuzz::fail;
using fuzz::require;

const bool kTrace = std::getenv("STRATA_FUZZ_TRACE") != nullptr;

// The client's end of the connection: reads are handed out by the driver, writes collected.
class ScriptedStream final : public protocol::ByteStream {
 public:
  ScriptedStream(asio::io_context& io, fuzz::Ledger& ledger, std::function<void()> onClose)
      : io_(io), ledger_(ledger), onClose_(std::move(onClose)) {}

  void asyncReadSome(asio::mutable_buffer buffer, Handler handler) override {
    require(!reader_, "the connection started a second read while one was pending");
    require(!closed_, "the connection read after closing its stream");
    buffer_ = buffer;
    reader_ = std::move(handler);
  }
  void asyncWrite(const std::vector<asio::const_buffer>& buffers, Handler handler) override {
    require(!closed_, "the connection wrote after closing its stream");
    std::size_t n = 0;
    for (const auto& b : buffers) {
      written.append(static_cast<const char*>(b.data()), b.size());
      n += b.size();
    }
    asio::post(io_, [handler = std::move(handler), n] { handler({}, n); });
  }
  void close() override {
    require(!closed_, "the stream was closed twice");
    closed_ = true;
    onClose_();
    // As a closed descriptor does: a pending read completes with operation_aborted.
    if (reader_) asio::post(io_, [h = std::exchange(reader_, nullptr)] { h(asio::error::operation_aborted, 0); });
  }
  std::string describe() const override { return "fuzz input"; }

  bool reading() const { return static_cast<bool>(reader_); }
  bool closed() const { return closed_; }
  // Completes the pending read with up to its buffer's size of `bytes`; returns how many.
  // `frame`: the request these bytes complete, for the fake's bookkeeping.
  std::size_t deliver(std::string_view bytes, std::optional<std::size_t> frame) {
    std::size_t n = std::min(bytes.size(), buffer_.size());
    std::memcpy(buffer_.data(), bytes.data(), n);
    if (n < bytes.size()) frame.reset();
    asio::post(io_, [this, h = std::exchange(reader_, nullptr), n, frame] {
      ledger_.frame = frame;
      ledger_.attributed = false;
      h({}, n);
      ledger_.frame.reset();
    });
    return n;
  }
  void deliverEof() {
    asio::post(io_, [h = std::exchange(reader_, nullptr)] { h(asio::error::eof, 0); });
  }

  std::string written;

 private:
  asio::io_context& io_;
  fuzz::Ledger& ledger_;
  std::function<void()> onClose_;
  asio::mutable_buffer buffer_;
  Handler reader_;
  bool closed_ = false;
};

void drain(asio::io_context& io) {
  io.restart();
  io.run();
}

// Read sizes from an FNV-1a hash of the input, as in dap_fuzzer.cpp: mostly small reads.
std::vector<std::size_t> splitSizes(std::string_view input) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : input) h = (h ^ c) * 1099511628211ull;
  std::vector<std::size_t> sizes;
  for (int i = 0; i < 16; ++i) {
    h ^= h << 13;
    h ^= h >> 7;
    h ^= h << 17;
    sizes.push_back((h & 3) == 0 ? 1 + (h >> 8) % 2048 : 1 + (h >> 8) % 64);
  }
  return sizes;
}

// A request the session must answer: the seq and command it must answer with.
struct Owed {
  std::int64_t seq = 0;
  std::string command;
};

std::optional<Owed> owedFor(std::string_view frame) {
  auto parsed = protocol::parseMessage(frame);
  if (auto* f = std::get_if<protocol::ParseFailure>(&parsed)) {
    if (!f->seq) return std::nullopt;
    return Owed{*f->seq, f->command.empty() ? "unknown" : f->command};
  }
  if (auto* q = std::get_if<protocol::Request>(&std::get<protocol::Message>(parsed))) return Owed{q->seq, q->command};
  return std::nullopt;
}

template <class T>
bool decodes(const json::value& body) {
  return static_cast<bool>(protocol::decode<T>(body.is_null() ? json::value(json::object()) : body, "body"));
}

// Fields a body without a typed struct must have, with their JSON kinds.
bool has(const json::value& body, std::initializer_list<std::pair<const char*, json::kind>> fields) {
  if (!body.is_object()) return false;
  for (const auto& [key, kind] : fields) {
    const json::value* v = body.as_object().if_contains(key);
    if (!v) return false;
    if (v->kind() != kind && !(kind == json::kind::int64 && v->is_uint64())) return false;
  }
  return true;
}

bool responseBodyFits(const std::string& command, const json::value& body) {
  using K = json::kind;
  static const std::map<std::string, bool (*)(const json::value&), std::less<>> typed = {
      {"initialize", decodes<protocol::Capabilities>},
      {"setBreakpoints", decodes<protocol::BreakpointsBody>},
      {"setFunctionBreakpoints", decodes<protocol::BreakpointsBody>},
      {"setExceptionBreakpoints", decodes<protocol::BreakpointsBody>},
      {"setDataBreakpoints", decodes<protocol::BreakpointsBody>},
      {"setInstructionBreakpoints", decodes<protocol::BreakpointsBody>},
      {"threads", decodes<protocol::ThreadsBody>},
      {"continue", decodes<protocol::ContinueResponseBody>},
      {"stackTrace", decodes<protocol::StackTraceBody>},
      {"scopes", decodes<protocol::ScopesBody>},
      {"variables", decodes<protocol::VariablesBody>},
      {"evaluate", decodes<protocol::EvaluateResponseBody>},
      {"setVariable", decodes<protocol::SetValueResponseBody>},
      {"setExpression", decodes<protocol::SetValueResponseBody>},
      {"completions", decodes<protocol::CompletionsBody>},
      {"exceptionInfo", decodes<protocol::ExceptionInfoResponseBody>},
      {"source", decodes<protocol::SourceResponseBody>},
  };
  if (auto it = typed.find(command); it != typed.end()) return it->second(body);
  if (command == "readMemory") return has(body, {{"address", K::string}});
  if (command == "writeMemory") return body.is_null() || body.is_object();
  if (command == "disassemble") {
    if (!has(body, {{"instructions", K::array}})) return false;
    for (const auto& i : body.at("instructions").as_array())
      if (!has(i, {{"address", K::string}, {"instruction", K::string}})) return false;
    return true;
  }
  if (command == "dataBreakpointInfo")
    return has(body, {{"description", K::string}}) && body.as_object().contains("dataId") &&
           (body.at("dataId").is_string() || body.at("dataId").is_null());
  if (command == "modules") return has(body, {{"modules", K::array}});
  if (command == "loadedSources") return has(body, {{"sources", K::array}});
  if (command == "stepInTargets") return has(body, {{"targets", K::array}});
  if (command == "gpuSummary")
    return has(body, {{"kernels", K::array}, {"copies", K::array}, {"syncs", K::array}, {"timeSpan", K::object},
                      {"devices", K::array}, {"streams", K::array}, {"dropped", K::int64}});
  if (command == "gpuTimeline") {
    if (!has(body, {{"window", K::object}, {"maxItems", K::int64}, {"tracks", K::array}, {"items", K::array}})) return false;
    return body.at("items").as_array().size() <= static_cast<std::size_t>(body.at("maxItems").to_number<std::int64_t>());
  }
  if (command == "gpuKernel")
    return has(body, {{"id", K::int64}, {"name", K::string}, {"stackFrames", K::array}}) &&
           decodes<protocol::StackTraceBody>(json::object{{"stackFrames", body.at("stackFrames")}});
  if (command == "gpuExport") return has(body, {{"format", K::string}, {"path", K::string}, {"events", K::int64}});
  return true;  // the rest answer no body
}

bool eventBodyFits(const std::string& event, const json::value& body) {
  using K = json::kind;
  static const std::map<std::string, bool (*)(const json::value&), std::less<>> typed = {
      {"output", decodes<protocol::OutputEventBody>},
      {"stopped", decodes<protocol::StoppedEventBody>},
      {"continued", decodes<protocol::ContinuedEventBody>},
      {"thread", decodes<protocol::ThreadEventBody>},
      {"breakpoint", decodes<protocol::BreakpointEventBody>},
      {"exited", decodes<protocol::ExitedEventBody>},
      {"terminated", decodes<protocol::TerminatedEventBody>},
      {"process", decodes<protocol::ProcessEventBody>},
      {"capabilities", decodes<protocol::CapabilitiesEventBody>},
  };
  if (auto it = typed.find(event); it != typed.end()) return it->second(body);
  if (event == "initialized") return body.is_null();
  if (event == "gpuActivity")
    return has(body, {{"counts", K::object}, {"timeSpan", K::object}, {"dropped", K::int64}}) &&
           has(body.at("counts"), {{"records", K::int64}, {"kernels", K::int64}, {"copies", K::int64}});
  if (event == "progressStart") return has(body, {{"progressId", K::string}, {"title", K::string}});
  if (event == "progressUpdate" || event == "progressEnd") return has(body, {{"progressId", K::string}});
  if (event == "module")
    return has(body, {{"reason", K::string}, {"module", K::object}}) &&
           has(body.at("module"), {{"id", K::string}, {"name", K::string}});
  return false;
}

// Everything the session wrote, checked message by message; returns the responses as
// request_seq -> commands.
std::multimap<std::int64_t, std::string> checkOutput(std::string_view out) {
  std::multimap<std::int64_t, std::string> responses;
  std::int64_t seq = 1;
  bool initialized = false;
  std::size_t at = 0;
  while (at < out.size()) {
    // Exactly what encodeFrame writes, read by hand rather than by the decoder under test.
    static constexpr std::string_view kHeader = "Content-Length: ";
    require(out.substr(at, kHeader.size()) == kHeader, "a message without a Content-Length header");
    at += kHeader.size();
    std::size_t digits = 0, length = 0;
    while (at + digits < out.size() && out[at + digits] >= '0' && out[at + digits] <= '9' && digits < 10)
      length = length * 10 + static_cast<std::size_t>(out[at + digits++] - '0');
    require(digits > 0 && out.substr(at + digits, 4) == "\r\n\r\n", "a malformed Content-Length header");
    at += digits + 4;
    require(length <= out.size() - at, "a message shorter than its Content-Length");
    std::string_view body = out.substr(at, length);
    at += length;

    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    require(!ec && v.is_object(), "a message that is not a JSON object");
    const json::object& o = v.as_object();
    require(o.contains("seq") && o.at("seq").is_int64() && o.at("seq").get_int64() == seq++,
            "seq does not count up by one from 1");
    auto parsed = protocol::parseMessage(body);
    require(std::holds_alternative<protocol::Message>(parsed), "a message the protocol's own reader refuses");
    const auto& message = std::get<protocol::Message>(parsed);
    if (auto* r = std::get_if<protocol::Response>(&message)) {
      if (!r->success) {
        require(r->message && !r->message->empty(), "an error response without a message");
        require(has(r->body, {{"error", json::kind::object}}) &&
                    has(r->body.at("error"), {{"id", json::kind::int64}, {"format", json::kind::string}}),
                "an error response without an error body");
      } else {
        if (r->command == "initialize") {
          require(!initialized, "two successful initialize responses");
          initialized = true;
        }
        if (!responseBodyFits(r->command, r->body)) fail("a '" + r->command + "' response body of the wrong shape");
      }
      responses.emplace(r->request_seq, r->command);
    } else if (auto* e = std::get_if<protocol::Event>(&message)) {
      require(initialized, "an event before the initialize response");
      if (!eventBodyFits(e->event, e->body)) fail("a '" + e->event + "' event body of the wrong shape");
    } else {
      const auto& q = std::get<protocol::Request>(message);
      require(initialized, "a reverse request before the initialize response");
      require(q.command == "runInTerminal", "a reverse request other than runInTerminal");
      require(decodes<protocol::RunInTerminalRequestArguments>(q.arguments), "malformed runInTerminal arguments");
    }
  }
  return responses;
}

void traceNew(const std::string& written, std::size_t& shown) {
  if (!kTrace) return;
  protocol::FrameDecoder d;
  d.feed(std::string_view(written).substr(shown));
  shown = written.size();
  std::string body;
  while (d.next(body) == protocol::FrameDecoder::Status::Frame) std::fprintf(stderr, "-> %s\n", body.c_str());
}

void runSession(std::string_view input) {
  // The frames as the protocol's decoder cuts them, and where each ends in the input.
  std::vector<std::string> frames;
  std::vector<std::size_t> ends;
  {
    protocol::FrameDecoder mirror;
    mirror.feed(input);
    std::string body;
    while (mirror.next(body) == protocol::FrameDecoder::Status::Frame) {
      frames.push_back(body);
      ends.push_back(input.size() - mirror.buffered());
    }
  }

  asio::io_context io;
  fuzz::Ledger ledger;
  ledger.trace = kTrace;
  std::size_t delivered = 0;  // frames the session has been given
  std::set<std::size_t> waitingAtClose;
  auto owned = std::make_unique<ScriptedStream>(io, ledger, [&] {
    for (const auto& [frame, n] : ledger.waiting)
      if (n > 0) waitingAtClose.insert(frame);
  });
  ScriptedStream* stream = owned.get();
  auto connection = std::make_shared<protocol::Connection>(std::move(owned));
  bool ended = false;
  adapter::SessionOptions options;
  options.adapterExecutable = "/usr/bin/strata-dap";
  options.backendFactory.launch = [&io, &ledger](adapter::Session&, backends::BackendHost& host,
                                                 const backends::LaunchSpec&) {
    return std::make_unique<fuzz::FakeBackend>(io, host, ledger);
  };
  options.backendFactory.attach = [&io, &ledger](adapter::Session&, backends::BackendHost& host,
                                                 const backends::AttachSpec&) {
    return std::make_unique<fuzz::FakeBackend>(io, host, ledger);
  };
  options.backendFactory.gpu = [](adapter::Session&, backends::BackendHost& host) {
    return std::make_unique<fuzz::FakeGpu>(host);
  };
  options.backendFactory.services = {fuzz::FakeGpu::staticFeatures()};
  auto session = std::make_shared<adapter::Session>(io, connection, options, [&ended] { ended = true; });
  session->start();
  drain(io);

  auto sizes = splitSizes(input);
  std::size_t at = 0, frame = 0, shown = 0;
  for (std::size_t i = 0; at < input.size() && stream->reading(); ++i) {
    std::size_t end = std::min(input.size(), at + sizes[i % sizes.size()]);
    if (frame < ends.size()) end = std::min(end, ends[frame]);
    std::optional<std::size_t> completes;
    if (frame < ends.size() && end == ends[frame]) completes = frame;
    if (kTrace && completes) std::fprintf(stderr, "<- [%zu] %s\n", frame, frames[frame].c_str());
    std::size_t n = stream->deliver(input.substr(at, end - at), completes);
    at += n;
    drain(io);
    if (completes && at == end) {
      delivered = ++frame;
      // Replies held back come after later requests, as a busy backend's would.
      if (ledger.live && ledger.live->release(false) > 0) drain(io);
    }
    traceNew(stream->written, shown);
  }
  // What is still held comes now: every request must then have had its answer.
  while (!stream->closed() && ledger.live && ledger.live->release(true) > 0) drain(io);
  traceNew(stream->written, shown);

  auto responses = checkOutput(stream->written);
  std::map<std::int64_t, std::vector<std::pair<std::string, bool>>> owed;  // seq -> (command, excused)
  for (std::size_t i = 0; i < delivered; ++i) {
    auto o = owedFor(frames[i]);
    if (!o) continue;
    auto w = ledger.waiting.find(i);
    bool excused = ledger.dropped.count(i) || (w != ledger.waiting.end() && w->second > 0) || waitingAtClose.count(i);
    owed[o->seq].emplace_back(o->command, excused);
  }
  for (const auto& [seq, list] : owed) {
    std::size_t answered = responses.count(seq), required = 0;
    for (const auto& [command, excused] : list) required += excused ? 0 : 1;
    if (answered < required) fail("request " + std::to_string(seq) + " ('" + list[0].first + "') got no response");
    if (answered > list.size()) fail("request " + std::to_string(seq) + " got more than one response");
  }
  for (const auto& [seq, command] : responses) {
    auto it = owed.find(seq);
    if (it == owed.end()) fail("a response to seq " + std::to_string(seq) + ", which no request had");
    bool known = false;
    for (const auto& [c, excused] : it->second) known = known || c == command;
    if (!known) fail("a response to seq " + std::to_string(seq) + " names the wrong command '" + command + "'");
  }

  // The client goes away: the session ends and lets go of everything.
  require(stream->reading() || stream->closed(), "the connection stopped reading but stayed open");
  if (stream->reading()) stream->deliverEof();
  drain(io);
  require(ended, "the session did not end when its connection closed");
  std::weak_ptr<adapter::Session> weak = session;
  session.reset();
  connection.reset();
  drain(io);
  require(weak.expired(), "something keeps the session alive after it ended");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  runSession(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
