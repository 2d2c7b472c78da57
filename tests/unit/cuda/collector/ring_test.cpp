// The collector ring: every message type through a real file mapping, wrap-around, exact drop
// counts, a producer and a consumer on two threads and in two processes, corruption, sessions.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "ring_writer.hpp"
#include "support.hpp"

using namespace strata::cuda;
using namespace strata::cuda::test;
using ring::RingWriter;

namespace {

std::unique_ptr<RingReader> openOnly(const ScratchDir& dir) {
  auto files = dir.files();
  REQUIRE(files.size() == 1);
  auto r = RingReader::open(files[0]);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return std::move(*r);
}

}  // namespace

TEST_CASE("every message type crosses the ring with its fields") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "s1", 1 << 20, ring::Mode::Stacks).ok());
  CHECK(w.path() == dir.path() + "/strata-gpu-" + std::to_string(getpid()) + ".ring");

  ring::StringMessage sm{3, 5};
  REQUIRE(w.write(ring::MessageType::String, &sm, sizeof sm, "hello", 5));
  ring::SiteMessage site{};
  site.id = 9;
  site.cbid = 211;
  site.api = 3;
  site.domain = 2;
  site.pythonCount = 1;
  site.nativeCount = 2;
  ring::PythonFrameWire py{3, 3, 42, 0};
  ring::NativeFrameWire nat[2] = {{0x1234, 0x234, 3, 3}, {0x5678, 0x678, 3, 0}};
  std::vector<std::uint8_t> frames(sizeof py + sizeof nat);
  std::memcpy(frames.data(), &py, sizeof py);
  std::memcpy(frames.data() + sizeof py, nat, sizeof nat);
  REQUIRE(w.write(ring::MessageType::Site, &site, sizeof site, frames.data(), frames.size()));
  GpuRecord rec = kernelRecord(77);
  rec.name = 3;
  rec.site = 9;
  rec.grid[0] = 128;
  rec.bytes = 99;
  REQUIRE(w.writeRecords(&rec, 1) == 1);
  ring::CudaErrorMessage err{};
  err.result = 700;
  err.api = 3;
  err.lastCorrelation = 77;
  err.callerElfAddress = 0x4242;
  REQUIRE(w.write(ring::MessageType::CudaError, &err, sizeof err));
  ring::ObjectNameMessage name{5, {1, 2, 3}, 3, 0};
  REQUIRE(w.write(ring::MessageType::ObjectName, &name, sizeof name));

  auto reader = openOnly(dir);
  CHECK(reader->pid() == static_cast<std::uint32_t>(getpid()));
  CHECK(reader->session() == "s1");
  KeepAll got;
  auto n = reader->drain(got);
  REQUIRE(n.ok());
  CHECK(*n == 1);
  CHECK(std::string(got.order.begin(), got.order.end()) == "sSren");
  CHECK(got.strings[0] == std::pair<std::uint32_t, std::string>{3, "hello"});
  CHECK(got.sites[0].id == 9);
  CHECK(got.sites[0].cbid == 211);
  CHECK(got.sites[0].domain == 2);
  REQUIRE(got.sitePython[0].size() == 1);
  CHECK(got.sitePython[0][0].line == 42);
  REQUIRE(got.siteNative[0].size() == 2);
  CHECK(got.siteNative[0][1].pc == 0x5678);
  CHECK(got.siteNative[0][1].elfAddress == 0x678);
  CHECK(std::memcmp(&got.records[0], &rec, sizeof rec) == 0);
  CHECK(got.errors[0].result == 700);
  CHECK(got.errors[0].lastCorrelation == 77);
  CHECK(got.errors[0].callerElfAddress == 0x4242);
  CHECK(got.names[0].objectKind == 5);
  CHECK(got.names[0].ids[2] == 3);
  CHECK(reader->pending() == 0);
  // Drained means drained: a second pass hands out nothing.
  KeepAll again;
  CHECK(*reader->drain(again) == 0);
  CHECK(again.order.empty());
}

TEST_CASE("records wrap around the end of the ring in order, with padding skipped") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "", 1, ring::Mode::Trace).ok());
  CHECK(w.capacity() == ring::kMinCapacity);
  auto reader = openOnly(dir);
  // A string of odd size first, so records do not tile the ring exactly and a wrap needs padding.
  ring::StringMessage sm{1, 13};
  REQUIRE(w.write(ring::MessageType::String, &sm, sizeof sm, "thirteen-char", 13));
  const std::size_t perMessage = sizeof(ring::MessageHeader) + sizeof(GpuRecord);
  const std::size_t fits = (w.capacity() - 32) / perMessage;
  std::uint32_t next = 0, expected = 0;
  KeepAll got;
  // Three rounds of filling most of the ring and draining it: the write position passes the
  // end more than once.
  for (int round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < fits * 3 / 4; ++i) {
      GpuRecord r = kernelRecord(++next);
      REQUIRE(w.writeRecords(&r, 1) == 1);
    }
    got.records.clear();
    REQUIRE(reader->drain(got).ok());
    for (const auto& r : got.records) CHECK(r.correlation == ++expected);
  }
  CHECK(expected == next);
  CHECK(reader->pending() == 0);
  CHECK(reader->status().droppedRecords == 0);
}

TEST_CASE("a full ring refuses records, and the counts say exactly how many") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "", 1 << 20, ring::Mode::Trace).ok());
  std::vector<GpuRecord> batch(20000);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = kernelRecord(static_cast<std::uint32_t>(i + 1));
  const std::size_t written = w.writeRecords(batch.data(), batch.size());
  CHECK(written == ring::kMinCapacity / (sizeof(ring::MessageHeader) + sizeof(GpuRecord)));
  w.countDroppedRecords(batch.size() - written);
  CHECK(w.freeBytes() < sizeof(ring::MessageHeader) + sizeof(GpuRecord));
  auto reader = openOnly(dir);
  auto status = reader->status();
  CHECK(status.recordsWritten == written);
  CHECK(status.droppedRecords == batch.size() - written);
  KeepAll got;
  CHECK(*reader->drain(got) == written);
  CHECK(got.records.back().correlation == written);
  // Room again after the reader caught up.
  CHECK(w.writeRecords(batch.data(), 1) == 1);
}

TEST_CASE("a producer thread and a consumer thread lose nothing they do not count") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "", 1 << 20, ring::Mode::Trace).ok());
  auto reader = openOnly(dir);
  constexpr std::uint32_t kTotal = 1'000'000;
  std::atomic<bool> done{false};
  std::uint64_t dropped = 0;
  std::thread producer([&] {
    GpuRecord batch[64];
    for (std::uint32_t i = 0; i < kTotal;) {
      std::size_t n = std::min<std::uint32_t>(64, kTotal - i);
      for (std::size_t k = 0; k < n; ++k) batch[k] = kernelRecord(i + 1 + static_cast<std::uint32_t>(k));
      std::size_t written = w.writeRecords(batch, n);
      w.countDroppedRecords(n - written);
      dropped += n - written;
      i += static_cast<std::uint32_t>(n);
    }
    done = true;
  });
  std::uint64_t received = 0;
  std::uint32_t last = 0;
  bool ordered = true;
  struct Check : RingSink {
    std::uint64_t* received;
    std::uint32_t* last;
    bool* ordered;
    void onRecord(const GpuRecord& r) override {
      if (r.correlation <= *last) *ordered = false;
      *last = r.correlation;
      ++*received;
    }
    void onString(std::uint32_t, std::string_view) override {}
    void onSite(const ring::SiteMessage&, std::span<const ring::PythonFrameWire>,
                std::span<const ring::NativeFrameWire>) override {}
    void onCudaError(const ring::CudaErrorMessage&, std::span<const ring::CallerWire>) override {}
    void onObjectName(const ring::ObjectNameMessage&) override {}
  } sink;
  sink.received = &received;
  sink.last = &last;
  sink.ordered = &ordered;
  while (!done.load()) REQUIRE(reader->drain(sink, 4096).ok());
  producer.join();
  REQUIRE(reader->drain(sink).ok());
  CHECK(ordered);
  CHECK(received + dropped == kTotal);
  CHECK(reader->status().droppedRecords == dropped);
  CHECK(reader->status().recordsWritten == received);
  MESSAGE("received " << received << ", dropped " << dropped);
}

TEST_CASE("another process's ring is read while that process is stopped, and after it exited") {
  ScratchDir dir;
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    RingWriter w;
    if (!w.create(dir.path(), "s2", 1 << 20, ring::Mode::Trace).ok()) _exit(3);
    w.setStatus(ring::State::Collecting, "collecting in the child");
    for (std::uint32_t i = 1; i <= 1000; ++i) {
      GpuRecord r = kernelRecord(i);
      if (w.writeRecords(&r, 1) != 1) _exit(4);
    }
    close(ready[0]);
    (void)!write(ready[1], "x", 1);
    raise(SIGSTOP);
    for (std::uint32_t i = 1001; i <= 1500; ++i) {
      GpuRecord r = kernelRecord(i);
      if (w.writeRecords(&r, 1) != 1) _exit(5);
    }
    _exit(0);
  }
  close(ready[1]);
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  REQUIRE(WIFSTOPPED(status));

  SessionReader session(dir.path(), "s2");
  Batch batch;
  REQUIRE(session.poll(batch).ok());
  CHECK(batch.records.size() == 1000);
  CHECK(batch.records.front().pid == static_cast<std::uint32_t>(child));
  auto procs = session.processes();
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].pid == static_cast<std::uint32_t>(child));
  CHECK(procs[0].alive);
  CHECK(procs[0].state == ring::State::Collecting);
  CHECK(procs[0].text == "collecting in the child");

  kill(child, SIGCONT);
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  batch.clear();
  REQUIRE(session.poll(batch).ok());
  REQUIRE(batch.records.size() == 500);
  CHECK(batch.records.front().correlation == 1001);
  CHECK(batch.records.back().correlation == 1500);
  CHECK_FALSE(session.processes()[0].alive);
}

TEST_CASE("a ring a producer scribbled on is reported with its file and position, and left alone") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "", 1 << 20, ring::Mode::Trace).ok());
  GpuRecord r = kernelRecord(1);
  REQUIRE(w.writeRecords(&r, 1) == 1);
  REQUIRE(w.writeRecords(&r, 1) == 1);
  // The second message's length: 12 is not a multiple of 8.
  auto* second = reinterpret_cast<ring::MessageHeader*>(reinterpret_cast<std::uint8_t*>(w.header()) + ring::kHeaderSize +
                                                         sizeof(ring::MessageHeader) + sizeof(GpuRecord));
  second->length = 12;
  SessionReader session(dir.path(), "");
  Batch batch;
  REQUIRE(session.poll(batch).ok());
  CHECK(batch.records.size() == 1);  // what came before the damage is kept
  auto procs = session.processes();
  REQUIRE(procs.size() == 1);
  CHECK(procs[0].problem.find(w.path()) != std::string::npos);
  CHECK(procs[0].problem.find("corrupt at byte 136") != std::string::npos);
  CHECK(procs[0].problem.find("message length 12") != std::string::npos);
  // Further polls neither crash nor read past the damage.
  second->length = 136;
  batch.clear();
  REQUIRE(session.poll(batch).ok());
  CHECK(batch.records.empty());
}

TEST_CASE("the session reader keeps to its session, waits for unfinished rings, and names bad files") {
  ScratchDir dir;
  RingWriter mine, other;
  REQUIRE(mine.create(dir.path(), "mine", 1 << 20, ring::Mode::Trace).ok());
  REQUIRE(other.create(dir.path(), "other", 1 << 20, ring::Mode::Trace).ok());
  CHECK(other.path() == dir.path() + "/strata-gpu-" + std::to_string(getpid()) + "-1.ring");
  // A ring whose producer has not written its header yet: all zeros.
  const std::string early = dir.path() + "/strata-gpu-99999.ring";
  int fd = open(early.c_str(), O_RDWR | O_CREAT, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, ring::kHeaderSize + ring::kMinCapacity) == 0);
  GpuRecord r = kernelRecord(5);
  REQUIRE(mine.writeRecords(&r, 1) == 1);
  REQUIRE(other.writeRecords(&r, 1) == 1);

  SessionReader session(dir.path(), "mine");
  Batch batch;
  REQUIRE(session.poll(batch).ok());
  CHECK(batch.records.size() == 1);
  CHECK(session.processes().size() == 1);

  // The early ring finishes its header now (as a producer would): the next poll opens it.
  void* p = mmap(nullptr, ring::kHeaderSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(p != MAP_FAILED);
  auto* h = static_cast<ring::Header*>(p);
  h->formatVersion = ring::kFormatVersion;
  h->headerSize = ring::kHeaderSize;
  h->capacity = ring::kMinCapacity;
  h->pid = 99999;
  h->recordSize = sizeof(GpuRecord);
  std::memcpy(h->session, "mine", 4);
  std::memcpy(h->magic, ring::kMagic, 8);
  munmap(p, ring::kHeaderSize);
  close(fd);
  batch.clear();
  REQUIRE(session.poll(batch).ok());
  auto procs = session.processes();
  REQUIRE(procs.size() == 2);
  for (const auto& p : procs) CHECK(p.alive == (p.pid != 99999));  // nobody holds the early one's lock

  SessionReader missing(dir.path() + "/nope", "");
  auto bad = missing.poll(batch);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find(dir.path() + "/nope") != std::string::npos);
}

TEST_CASE("strings and sites get session-wide ids across the rings of several processes") {
  ScratchDir dir;
  RingWriter a, b;
  REQUIRE(a.create(dir.path(), "s", 1 << 20, ring::Mode::Stacks).ok());
  REQUIRE(b.create(dir.path(), "s", 1 << 20, ring::Mode::Stacks).ok());
  auto str = [](RingWriter& w, std::uint32_t id, const std::string& text) {
    ring::StringMessage m{id, static_cast<std::uint32_t>(text.size())};
    REQUIRE(w.write(ring::MessageType::String, &m, sizeof m, text.data(), text.size()));
  };
  // The same kernel name under different producer ids, and names only one process has.
  str(a, 1, "_Z6kernelPf");
  str(a, 2, "a_only");
  str(b, 1, "b_only");
  str(b, 2, "_Z6kernelPf");
  ring::SiteMessage site{};
  site.id = 1;
  site.api = 2;
  site.pythonCount = 1;
  ring::PythonFrameWire f{2, 1, 17, 0};
  REQUIRE(a.write(ring::MessageType::Site, &site, sizeof site, &f, sizeof f));
  GpuRecord ra = kernelRecord(1), rb = kernelRecord(1);
  ra.name = 1;
  ra.site = 1;
  rb.name = 2;
  REQUIRE(a.writeRecords(&ra, 1) == 1);
  REQUIRE(b.writeRecords(&rb, 1) == 1);

  SessionReader session(dir.path(), "s");
  Batch batch;
  REQUIRE(session.poll(batch).ok());
  REQUIRE(batch.records.size() == 2);
  CHECK(batch.records[0].name == batch.records[1].name);
  CHECK(session.string(batch.records[0].name) == "_Z6kernelPf");
  CHECK(batch.strings.size() == 3);  // one entry per distinct text
  REQUIRE(batch.sites.size() == 1);
  // Rings are read in file-name order; whichever came first, a's record has the site, b's none.
  const bool aFirst = batch.records[0].site != 0;
  CHECK(batch.records[aFirst ? 0 : 1].site == batch.sites[0].id);
  CHECK(batch.records[aFirst ? 1 : 0].site == 0);
  CHECK(batch.sites[0].pid == static_cast<std::uint32_t>(getpid()));
  const LaunchSite* s = session.site(batch.sites[0].id);
  REQUIRE(s != nullptr);
  CHECK(s->api == "a_only");
  REQUIRE(s->python.size() == 1);
  CHECK(s->python[0].function == "a_only");
  CHECK(s->python[0].file == "_Z6kernelPf");
  CHECK(s->python[0].line == 17);
}

TEST_CASE("status text crosses under its sequence lock; a flush request is served or times out") {
  ScratchDir dir;
  RingWriter w;
  REQUIRE(w.create(dir.path(), "", 1 << 20, ring::Mode::Stacks).ok());
  w.setVersions(130001, 130001);
  w.setStatus(ring::State::StoodAside, "CUPTI is held by someone else");
  auto reader = openOnly(dir);
  auto s = reader->status();
  CHECK(s.state == ring::State::StoodAside);
  CHECK(s.mode == ring::Mode::Stacks);
  CHECK(s.text == "CUPTI is held by someone else");
  CHECK(s.cuptiVersion == 130001);
  CHECK(s.alive);
  w.setStatus(ring::State::Collecting, std::string(2000, 'x'));  // longer than the area: cut
  CHECK(reader->status().text.size() == ring::kStatusTextSize - 1);

  const std::uint32_t request = reader->requestFlush();
  CHECK(w.flushRequested() == request);
  CHECK_FALSE(reader->waitFlushed(request, std::chrono::milliseconds(30)));
  std::thread server([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    w.markFlushed(w.flushRequested());
  });
  CHECK(reader->waitFlushed(request, std::chrono::milliseconds(5000)));
  server.join();
}
