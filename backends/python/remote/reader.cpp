// PyRemote: finds _PyRuntime in a process and walks its threads and frames through process_vm_readv.
#include <dirent.h>
#include <signal.h>
#include <sys/uio.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

#include <gelf.h>

#include "strata/python/remote/layout.hpp"
#include "strata/hex.hpp"
#include "strata/elf_file.hpp"
#include "strata/proc_maps.hpp"
#include "strata/native/symbols/object_symbols.hpp"
#include "strata/python/remote/py_remote.hpp"

namespace strata::python::remote {

namespace {

using native::symbols::ObjectSymbols;

constexpr std::size_t kHardFrameLimit = 200000;  // a chain longer than this is a cycle or garbage
constexpr std::size_t kMaxThreads = 10000;
constexpr std::size_t kMaxText = 4096;

struct Code {
  std::string function, file, linetable;
  int firstLine = 0;
  std::vector<std::string> localNames;
  bool namesRead = false;
};

// A mapped file whose name says it is CPython (libpython3.X.so, python3.X), with its load bias.
struct PythonObject {
  std::string path;
  std::uint64_t bias = 0;
};

std::vector<PythonObject> pythonObjects(ProcessImage& image) {
  std::vector<PythonObject> out;
  for (const auto& [file, headerStart] : mappedFiles(image.mappings()))
    if (file.substr(file.rfind('/') + 1).find("python") != std::string::npos) out.push_back({file, headerStart});
  return out;
}

// The data symbols CPython exports (ObjectSymbols indexes functions only): name to link-time
// address, from .dynsym and .symtab.
std::map<std::string, std::uint64_t> dataSymbols(Elf* elf, const std::set<std::string>& wanted) {
  std::map<std::string, std::uint64_t> out;
  forEachSymbol(elf, [&](const char* name, const GElf_Sym& sym) {
    if (sym.st_shndx != SHN_UNDEF && sym.st_value && wanted.count(name)) out.emplace(name, sym.st_value);
  });
  return out;
}

// The minor version a file name gives ("libpython3.10.so.1.0", "python3.10"): 0 when none.
int minorFromName(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  auto at = base.find("python3.");
  if (at == std::string::npos) return 0;
  int minor = 0;
  auto text = base.c_str() + at + 8;
  auto r = std::from_chars(text, base.c_str() + base.size(), minor);
  return r.ec == std::errc() ? minor : 0;
}

std::set<pid_t> taskIds(pid_t pid) {
  std::set<pid_t> out;
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d) return out;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') out.insert(static_cast<pid_t>(std::atoi(e->d_name)));
  closedir(d);
  return out;
}

// A running process, read with process_vm_readv; its files through /proc/PID/root.
class LiveProcess : public ProcessImage {
 public:
  explicit LiveProcess(pid_t pid) : pid_(pid) {}
  pid_t pid() const override { return pid_; }
  std::string describe() const override { return "process " + std::to_string(pid_); }
  bool read(std::uint64_t address, void* buffer, std::size_t size) override {
    iovec local{buffer, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    return process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
  }
  std::vector<Mapping> mappings() override {
    auto maps = readMappings(pid_);
    return maps ? std::move(*maps) : std::vector<Mapping>{};
  }
  std::vector<std::string> localPaths(const std::string& mapped) override {
    // The file as the process sees it (a container's file system), else by the same path here.
    return {"/proc/" + std::to_string(pid_) + "/root" + mapped, mapped};
  }
  std::set<pid_t> threadIds() override { return taskIds(pid_); }

 private:
  pid_t pid_;
};

std::string pyRepr(const std::string& s, char quote = '\'') {
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
    else out += static_cast<char>(c);
  }
  return out + quote;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) out += static_cast<char>(cp);
  else if (cp < 0x800) out += static_cast<char>(0xc0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3f));
  else if (cp < 0x10000)
    out += static_cast<char>(0xe0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
        out += static_cast<char>(0x80 | (cp & 0x3f));
  else
    out += static_cast<char>(0xf0 | (cp >> 18)), out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f)),
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f)), out += static_cast<char>(0x80 | (cp & 0x3f));
}

}  // namespace

struct PyRemote::State {
  pid_t pid = 0;
  PyLayout L;
  std::string version;
  std::uint64_t runtime = 0;
  std::map<std::string, std::uint64_t> symbols;  // wanted names, by address in the process
  // Type objects and singletons, by address in the process.
  std::uint64_t codeType = 0, frameType = 0, unicodeType = 0, longType = 0, boolType = 0, floatType = 0, bytesType = 0,
                tupleType = 0, listType = 0, dictType = 0, setType = 0, none = 0, trueObject = 0;
  std::unordered_map<std::uint64_t, Code> codes;  // code objects live as long as their frames
  std::unordered_map<std::uint64_t, std::string> typeNames;
  std::optional<Error> failure;  // the first read that failed, for the caller

  std::shared_ptr<ProcessImage> image;

  bool read(std::uint64_t address, void* buffer, std::size_t size) {
    errno = 0;
    if (image->read(address, buffer, size)) return true;
    if (!failure) {
      std::string what = "read " + std::to_string(size) + " bytes at " + hexAddress(address) + " of " + image->describe();
      failure = errno ? errnoError(errors::kPythonMemory, what) : Error{errors::kPythonMemory, what + ": not in the image", true};
    }
    return false;
  }
  template <class T>
  T get(std::uint64_t address) {
    T v{};
    if (!read(address, &v, sizeof v)) return T{};
    return v;
  }
  std::uint64_t ptr(std::uint64_t address) { return get<std::uint64_t>(address); }
  std::uint64_t typeOf(std::uint64_t object) { return object ? ptr(object + 8) : 0; }

  Error layoutError(const std::string& what) const {
    return Error{errors::kPythonLayout, "the process's memory does not fit the " + L.source + " (process runs CPython " +
                                            version + "): " + what};
  }

  std::string cString(std::uint64_t address, std::size_t max) {
    std::string out;
    char buf[64];
    while (out.size() < max) {
      if (!read(address + out.size(), buf, sizeof buf)) break;
      auto n = strnlen(buf, sizeof buf);
      out.append(buf, n);
      if (n < sizeof buf) break;
    }
    return out;
  }

  const std::string& typeName(std::uint64_t type) {
    auto it = typeNames.find(type);
    if (it != typeNames.end()) return it->second;
    std::string name = cString(ptr(type + L.typeName), 80);
    return typeNames.emplace(type, name.empty() ? "?" : name).first->second;
  }

  // A str's text as UTF-8 (at most `max` characters); nullopt when it is no compact str.
  std::optional<std::string> unicode(std::uint64_t object, std::size_t max = kMaxText, bool* cut = nullptr) {
    if (!object || typeOf(object) != unicodeType) return std::nullopt;
    auto length = get<std::int64_t>(object + L.unicodeLength);
    auto state = get<std::uint32_t>(object + L.unicodeState);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4)) return std::nullopt;
    std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(length), max);
    if (cut) *cut = n < static_cast<std::size_t>(length);
    std::uint64_t data = object + (ascii ? L.unicodeAsciiSize : L.unicodeCompactSize);
    std::string raw(n * kind, '\0');
    if (n && !read(data, raw.data(), raw.size())) return std::nullopt;
    if (kind == 1 && ascii) return raw;
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t cp = 0;
      std::memcpy(&cp, raw.data() + i * kind, kind);
      appendUtf8(out, cp);
    }
    return out;
  }

  std::optional<std::string> bytes(std::uint64_t object, std::size_t max, bool* cut = nullptr) {
    if (!object || typeOf(object) != bytesType) return std::nullopt;
    auto size = get<std::int64_t>(object + L.bytesSize);
    if (size < 0) return std::nullopt;
    std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(size), max);
    if (cut) *cut = n < static_cast<std::size_t>(size);
    std::string out(n, '\0');
    if (n && !read(object + L.bytesData, out.data(), n)) return std::nullopt;
    return out;
  }

  Result<const Code*> code(std::uint64_t object) {
    auto it = codes.find(object);
    if (it != codes.end()) return &it->second;
    Code c;
    auto file = unicode(ptr(object + L.codeFilename));
    if (!file) return layoutError("the code object at " + hexAddress(object) + " has no str co_filename");
    c.file = *file;
    auto name = unicode(ptr(object + (L.codeQualname != kAbsent ? L.codeQualname : L.codeName)));
    if (!name) return layoutError("the code object at " + hexAddress(object) + " has no str name");
    c.function = *name;
    c.firstLine = get<int>(object + L.codeFirstlineno);
    auto table = bytes(ptr(object + L.codeLinetable), 1 << 20);
    if (table) c.linetable = std::move(*table);
    return &codes.emplace(object, std::move(c)).first->second;
  }

  void localNames(std::uint64_t object, Code& c) {
    if (c.namesRead) return;
    c.namesRead = true;
    std::uint64_t tuple = ptr(object + (L.frameObjects ? L.codeVarnames : L.codeLocalsplusnames));
    if (typeOf(tuple) != tupleType) return;
    auto n = get<std::int64_t>(tuple + L.tupleSize);
    if (L.frameObjects) n = std::min<std::int64_t>(n, get<int>(object + L.codeNlocals));
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4096); ++i)
      c.localNames.push_back(unicode(ptr(tuple + L.tupleItems + 8 * static_cast<std::uint64_t>(i)), 200).value_or("?"));
  }

  std::string longText(std::uint64_t object) {
    auto size = get<std::int64_t>(object + L.longSize);
    bool negative = false;
    std::uint64_t digits = 0;
    if (L.longTagged) {
      auto tag = static_cast<std::uint64_t>(size);
      negative = (tag & 3) == 2;
      digits = tag >> 3;
    } else {
      negative = size < 0;
      digits = static_cast<std::uint64_t>(negative ? -size : size);
    }
    if (digits > 4) return "<int of " + std::to_string(digits * 30) + " bits>";
    std::uint32_t d[4] = {};
    if (digits && !read(object + L.longDigits, d, digits * 4)) return "?";
    unsigned __int128 v = 0;
    for (std::uint64_t i = digits; i-- > 0;) v = (v << 30) | (d[i] & 0x3fffffff);
    std::string text;
    do {
      text.insert(text.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
      v /= 10;
    } while (v);
    return negative ? "-" + text : text;
  }

  PyLocal value(const std::string& name, std::uint64_t object) {
    PyLocal out{name, "", ""};
    if (object == none) return {name, "NoneType", "None"};
    std::uint64_t type = typeOf(object);
    out.type = typeName(type);
    bool cut = false;
    if (type == boolType) out.value = object == trueObject ? "True" : "False";
    else if (type == longType) out.value = longText(object);
    else if (type == floatType) {
      double v = get<double>(object + L.floatValue);
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v);
      out.value.assign(buf, r.ptr);
      if (out.value.find_first_of(".eni") == std::string::npos) out.value += ".0";
    } else if (type == unicodeType) {
      auto s = unicode(object, 200, &cut);
      out.value = s ? pyRepr(*s) + (cut ? "..." : "") : "<str>";
    } else if (type == bytesType) {
      auto s = bytes(object, 200, &cut);
      out.value = s ? "b" + pyRepr(*s) + (cut ? "..." : "") : "<bytes>";
    } else if (type == tupleType || type == listType) {
      out.value = "len " + std::to_string(get<std::int64_t>(object + (type == tupleType ? L.tupleSize : L.listSize)));
    } else if (type == dictType) {
      out.value = "len " + std::to_string(get<std::int64_t>(object + L.dictUsed));
    } else if (type == setType) {
      out.value = "len " + std::to_string(get<std::int64_t>(object + L.setUsed));
    }
    return out;
  }

  // 3.10 names threads by pthread_t only; glibc keeps the kernel tid inside struct pthread.
  // Its offset is the first where every thread state's pthread holds a distinct tid of the
  // process (kAbsent when none does).
  std::uint64_t pthreadTidOffset(std::uint64_t interp, const std::set<pid_t>& tasks) {
    constexpr std::size_t kWords = 0x400;
    std::vector<std::vector<std::uint32_t>> structs;
    std::set<std::uint64_t> seen;
    for (std::uint64_t ts = ptr(interp + L.interpThreadsHead); ts && seen.insert(ts).second && seen.size() < kMaxThreads;
         ts = ptr(ts + L.tstateNext)) {
      std::vector<std::uint32_t> words(kWords);
      if (std::uint64_t id = ptr(ts + L.tstateThreadId); id && read(id, words.data(), kWords * 4)) structs.push_back(std::move(words));
    }
    failure.reset();
    for (std::size_t i = 4; i < kWords && !structs.empty(); ++i) {
      std::set<std::uint32_t> tids;
      bool all = true;
      for (const auto& words : structs)
        all = all && words[i] > 1 && tasks.count(static_cast<pid_t>(words[i])) && tids.insert(words[i]).second;
      if (all) return i * 4;
    }
    return kAbsent;
  }

  std::vector<PyLocal> locals(std::uint64_t frame, std::uint64_t codeObject, Code& c, std::size_t max) {
    localNames(codeObject, c);
    std::vector<PyLocal> out;
    std::size_t n = c.localNames.size();
    std::vector<std::uint64_t> values(n);
    if (n && !read(frame + L.frameLocalsplus, values.data(), n * 8)) return out;
    for (std::size_t i = 0; i < n && out.size() < max; ++i) {
      std::uint64_t v = values[i];
      if (L.stackRefTagBits && (v & L.stackRefTagBits) == L.stackRefTagBits) {
        // 3.14: an int held in the reference itself (Py_INT_TAG), no object behind it.
        out.push_back({c.localNames[i], "int", std::to_string(static_cast<std::int64_t>(v) >> 2)});
        continue;
      }
      v &= ~L.stackRefTagBits;
      if (v) out.push_back(value(c.localNames[i], v));
    }
    return out;
  }
};

PyRemote::PyRemote(std::unique_ptr<State> state) : state_(std::move(state)) {}
PyRemote::~PyRemote() = default;
const PyLayout& PyRemote::layout() const { return state_->L; }
const std::string& PyRemote::version() const { return state_->version; }
pid_t PyRemote::pid() const { return state_->pid; }
std::uint64_t PyRemote::runtimeAddress() const { return state_->runtime; }
std::uint64_t PyRemote::symbolAddress(const std::string& name) const {
  auto it = state_->symbols.find(name);
  return it != state_->symbols.end() ? it->second : 0;
}
Result<std::uint64_t> PyRemote::mainInterpreter() {
  State& s = *state_;
  s.failure.reset();
  std::uint64_t interp = s.ptr(s.runtime + s.L.runtimeInterpretersHead);
  if (s.failure) return std::move(*s.failure);
  if (!interp) return Error{errors::kNoPythonRuntime, "the CPython runtime of " + s.image->describe() + " has no interpreter"};
  return interp;
}

Result<std::unique_ptr<PyRemote>> PyRemote::open(pid_t pid, std::optional<int> forceMinor) {
  auto r = open(std::make_shared<LiveProcess>(pid), forceMinor);
  if (!r && r.error().id == errors::kNoPythonRuntime && ::kill(pid, 0) != 0 && errno == ESRCH)
    return Error{errors::kNoSuchProcess, "process " + std::to_string(pid) + ": no such process"};
  return r;
}

Result<std::unique_ptr<PyRemote>> PyRemote::open(std::shared_ptr<ProcessImage> image, std::optional<int> forceMinor) {
  auto s = std::make_unique<State>();
  s->pid = image->pid();
  s->image = image;
  std::shared_ptr<ObjectSymbols> symbols;
  std::map<std::string, std::uint64_t> syms;
  PythonObject where;
  static const std::set<std::string> wanted{"_PyRuntime", "Py_Version", "PyCode_Type", "PyFrame_Type", "PyUnicode_Type",
                                            "PyLong_Type", "PyBool_Type", "PyFloat_Type", "PyBytes_Type", "PyTuple_Type",
                                            "PyList_Type", "PyDict_Type", "PySet_Type", "_Py_NoneStruct", "_Py_TrueStruct",
                                            "PyRun_SimpleString"};
  for (const PythonObject& o : pythonObjects(*image)) {
    Result<std::shared_ptr<ObjectSymbols>> opened = Error{errors::kNoPythonRuntime, o.path};
    for (const auto& local : image->localPaths(o.path))
      if ((opened = ObjectSymbols::open(local))) break;
    if (!opened) continue;
    Elf* elf = (*opened)->elf();
    syms = dataSymbols(elf, wanted);
    if (!syms.count("_PyRuntime")) continue;
    // The bias of the mapping at file offset 0: start minus the first PT_LOAD's page.
    GElf_Ehdr eh;
    std::size_t phnum = 0;
    if (gelf_getehdr(elf, &eh) == nullptr || elf_getphdrnum(elf, &phnum) != 0) continue;
    std::uint64_t firstVaddr = UINT64_MAX;
    for (std::size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
        firstVaddr = std::min<std::uint64_t>(firstVaddr, ph.p_vaddr & ~0xfffULL);
    }
    where = o;
    where.bias = eh.e_type == ET_EXEC ? 0 : o.bias - firstVaddr;
    s->runtime = where.bias + syms["_PyRuntime"];
    symbols = *opened;
    break;
  }
  if (!symbols)
    return Error{errors::kNoPythonRuntime, image->describe() +
                                               " has no CPython loaded (no mapped libpython or python executable defines _PyRuntime)"};
  auto addressOf = [&](const char* name) -> std::uint64_t {
    auto it = syms.find(name);
    return it != syms.end() ? where.bias + it->second : 0;
  };
  for (const auto& [name, value] : syms) s->symbols[name] = where.bias + value;
  // The type objects and singletons values are told apart by (0: the runtime lacks the name).
  static constexpr std::pair<std::uint64_t State::*, const char*> kKnown[] = {
      {&State::codeType, "PyCode_Type"}, {&State::frameType, "PyFrame_Type"}, {&State::unicodeType, "PyUnicode_Type"},
      {&State::longType, "PyLong_Type"}, {&State::boolType, "PyBool_Type"}, {&State::floatType, "PyFloat_Type"},
      {&State::bytesType, "PyBytes_Type"}, {&State::tupleType, "PyTuple_Type"}, {&State::listType, "PyList_Type"},
      {&State::dictType, "PyDict_Type"}, {&State::setType, "PySet_Type"}, {&State::none, "_Py_NoneStruct"},
      {&State::trueObject, "_Py_TrueStruct"}};
  for (const auto& [field, name] : kKnown) (*s).*field = addressOf(name);
  if (!s->codeType || !s->unicodeType)
    return Error{errors::kNoPythonRuntime, where.path + " defines _PyRuntime but not PyCode_Type and PyUnicode_Type"};

  std::uint64_t versionHex = 0;
  int minor = 0;
  if (std::uint64_t at = addressOf("Py_Version")) {
    versionHex = s->get<std::uint32_t>(at);
    if (s->failure) return std::move(*s->failure);
    minor = static_cast<int>((versionHex >> 16) & 0xff);
    s->version = versionText(versionHex);
  } else {
    minor = minorFromName(where.path);  // 3.10 exports no Py_Version
    s->version = "3." + std::to_string(minor);
  }
  if (minor == 0) return Error{errors::kPythonLayout, "cannot tell which CPython " + where.path + " is"};

  if (forceMinor) {
    auto l = builtLayoutFor(*forceMinor, 0);
    if (!l) return l.takeError();
    s->L = std::move(*l);
  } else if (minor >= 13) {
    char bytes[1024];
    if (!s->read(s->runtime, bytes, sizeof bytes)) return std::move(*s->failure);
    auto l = layoutFromDebugOffsets(bytes, sizeof bytes, versionHex);
    if (!l) return l.takeError();
    s->L = std::move(*l);
  } else {
    auto l = builtLayoutFor(minor, versionHex);
    if (!l) return l.takeError();
    s->L = std::move(*l);
  }
  if (s->L.frameObjects && !s->frameType)
    return Error{errors::kPythonLayout, s->L.source + " reads PyFrameObjects but " + where.path + " defines no PyFrame_Type"};
  return std::unique_ptr<PyRemote>(new PyRemote(std::move(s)));
}

Result<PythonSnapshot> PyRemote::snapshot(const ReadOptions& options) {
  State& s = *state_;
  const PyLayout& L = s.L;
  s.failure.reset();
  PythonSnapshot snap;
  snap.version = s.version;
  snap.layoutSource = L.source;
  auto fail = [&]() -> Error { return std::move(*s.failure); };

  std::uint64_t interp = s.ptr(s.runtime + L.runtimeInterpretersHead);
  if (s.failure) return fail();
  if (!interp) return Error{errors::kNoPythonRuntime, "the CPython runtime of " + s.image->describe() + " has no interpreter (not started, or finalized)"};
  std::uint64_t gil = L.gilPlace == GilPlace::Runtime ? s.runtime + L.gilOffset : s.ptr(interp + L.gilOffset);
  int locked = gil ? s.get<int>(gil + L.gilLocked) : 0;
  std::uint64_t holder = gil ? s.ptr(gil + L.gilLastHolder) : 0;
  if (s.failure) return s.layoutError("the GIL's state cannot be read (" + s.failure->message + ")");
  if (locked != 0 && locked != 1 && locked != -1) return s.layoutError("the GIL's `locked` reads " + std::to_string(locked));
  snap.gilLocked = locked == 1;

  std::set<pid_t> tasks = s.image->threadIds();
  std::set<std::uint64_t> seen;
  std::size_t matched = 0;
  std::optional<std::uint64_t> pthreadTidOffset;

  for (std::uint64_t ts = s.ptr(interp + L.interpThreadsHead); ts && !s.failure; ts = s.ptr(ts + L.tstateNext)) {
    if (!seen.insert(ts).second || seen.size() > kMaxThreads) return s.layoutError("the thread list loops");
    std::uint64_t owner = s.ptr(ts + L.tstateInterp);
    if (s.failure) return s.layoutError("a thread state cannot be read (" + s.failure->message + ")");
    if (owner != interp)
      return s.layoutError("thread state " + hexAddress(ts) + " names interpreter " + hexAddress(owner) + ", not " +
                           hexAddress(interp));
    PythonThread t;
    t.threadState = ts;
    t.threadId = s.ptr(ts + L.tstateThreadId);
    if (L.tstateNativeThreadId != kAbsent) {
      auto tid = static_cast<pid_t>(s.ptr(ts + L.tstateNativeThreadId));
      if (tasks.count(tid)) t.tid = tid;
    } else if (t.threadId) {
      if (!pthreadTidOffset) pthreadTidOffset = s.pthreadTidOffset(interp, tasks);
      if (*pthreadTidOffset != kAbsent) {
        auto tid = static_cast<pid_t>(s.get<std::uint32_t>(t.threadId + *pthreadTidOffset));
        if (tasks.count(tid)) t.tid = tid;
      }
    }
    if (t.tid) ++matched;
    t.holdsGil = snap.gilLocked && holder == ts;

    std::uint64_t frame = s.ptr(ts + L.tstateFrame);
    if (L.cframeCurrentFrame != kAbsent && frame) frame = s.ptr(frame + L.cframeCurrentFrame);
    std::size_t evalIndex = 0;
    for (; frame && !s.failure; ++t.totalFrames) {
      if (t.totalFrames >= kHardFrameLimit) return s.layoutError("a frame chain is longer than " + std::to_string(kHardFrameLimit));
      bool keep = t.frames.size() < options.maxFrames;
      PythonFrame f;
      f.frameAddr = frame;
      f.evalIndex = evalIndex;
      std::uint64_t codeObject = s.ptr(frame + L.frameCode) & ~L.stackRefTagBits;
      std::uint64_t next = s.ptr(frame + L.framePrevious);
      if (L.frameObjects) {
        if (s.typeOf(frame) != s.frameType) return s.layoutError("frame " + hexAddress(frame) + " is not a PyFrameObject");
        ++evalIndex;  // 3.10 runs each frame in a _PyEval_EvalFrameDefault call of its own
      } else {
        auto ownerByte = s.get<std::uint8_t>(frame + L.frameOwner);
        if (ownerByte > L.shimOwnerLast) return s.layoutError("frame " + hexAddress(frame) + " has owner " + std::to_string(ownerByte));
        if (ownerByte >= L.shimOwnerFirst) {
          f.isShim = true;
          ++evalIndex;
          if (keep) t.frames.push_back(std::move(f));
          frame = next;
          continue;
        }
        if (L.frameIsEntry != kAbsent && s.get<std::uint8_t>(frame + L.frameIsEntry)) ++evalIndex;
      }
      if (s.failure) break;
      if (s.typeOf(codeObject) != s.codeType)
        return s.layoutError("frame " + hexAddress(frame) + " runs " + hexAddress(codeObject) + ", which is no code object");
      if (keep) {
        auto c = s.code(codeObject);
        if (!c) return c.takeError();
        f.function = (*c)->function;
        f.file = (*c)->file;
        if (L.frameObjects) {
          int lasti = s.get<int>(frame + L.frameLasti);
          f.line = lasti < 0 ? (*c)->firstLine : lineFromLineTable310((*c)->linetable, (*c)->firstLine, static_cast<std::uint64_t>(lasti));
        } else {
          auto instr = static_cast<std::int64_t>(s.ptr(frame + L.frameInstr));
          std::int64_t lasti = (instr - static_cast<std::int64_t>(codeObject + L.codeAdaptive)) / 2;
          f.line = lasti < 0 ? (*c)->firstLine
                             : lineFromLocationTable((*c)->linetable, (*c)->firstLine, static_cast<std::uint64_t>(lasti));
        }
        if (options.locals) f.locals = s.locals(frame, codeObject, s.codes[codeObject], options.maxLocals);
        t.frames.push_back(std::move(f));
      }
      frame = next;
    }
    if (s.failure) return s.layoutError("a frame cannot be read (" + s.failure->message + ")");
    // 3.10 and 3.11 mark the last frame of each call; the count is the calls that were entered.
    t.evalCalls = evalIndex;
    snap.threads.push_back(std::move(t));
  }
  if (s.failure) return s.layoutError("the thread list cannot be read (" + s.failure->message + ")");
  if (!snap.threads.empty() && matched == 0)
    return s.layoutError("no thread state names a thread of the process (" + std::to_string(snap.threads.size()) +
                         " thread states, " + std::to_string(tasks.size()) + " threads)");
  return snap;
}

}  // namespace strata::python::remote
