// Reading a CPython process's threads, frames and locals from its memory, running no code in it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "strata/proc_maps.hpp"
#include "strata/result.hpp"

namespace strata::python::remote {

inline constexpr std::uint64_t kAbsent = ~std::uint64_t{0};

// Where the GIL's state lives: inside _PyRuntime (3.10, 3.11), or behind a pointer in the
// interpreter (3.12 and newer).
enum class GilPlace { Runtime, InterpreterPointer };

// Offsets (bytes) into CPython's internal structures, one field per offset; kAbsent where a
// version has no such field. Filled from the process's own _Py_DebugOffsets (3.13), or from a
// table generated at build time from one CPython's internal headers (3.10, 3.11, 3.12).
struct PyLayout {
  int minor = 0;
  std::uint64_t versionHex = 0;  // PY_VERSION_HEX of the headers or the process
  std::string source;            // where the offsets came from, for messages

  std::uint64_t runtimeInterpretersHead = kAbsent;
  std::uint64_t runtimeFinalizing = kAbsent;  // the thread state finalizing the runtime (0 until then)
  GilPlace gilPlace = GilPlace::Runtime;
  std::uint64_t gilOffset = kAbsent;      // of the struct (Runtime) or of the pointer (InterpreterPointer)
  std::uint64_t gilLocked = kAbsent;      // in struct _gil_runtime_state
  std::uint64_t gilLastHolder = kAbsent;
  std::uint64_t interpThreadsHead = kAbsent;

  std::uint64_t tstateNext = kAbsent;
  std::uint64_t tstateInterp = kAbsent;
  std::uint64_t tstateThreadId = kAbsent;        // pthread_t
  std::uint64_t tstateNativeThreadId = kAbsent;  // the kernel's tid (3.11+)
  std::uint64_t tstateFrame = kAbsent;           // frame (3.10), cframe (3.11, 3.12), current_frame (3.13)
  std::uint64_t cframeCurrentFrame = kAbsent;    // the extra hop through _PyCFrame (3.11, 3.12)

  bool frameObjects = false;  // 3.10: a chain of PyFrameObjects, not _PyInterpreterFrames
  std::uint64_t framePrevious = kAbsent;
  std::uint64_t frameCode = kAbsent;
  std::uint64_t frameInstr = kAbsent;    // prev_instr / instr_ptr (3.11+)
  std::uint64_t frameLasti = kAbsent;    // f_lasti, in code units (3.10)
  std::uint64_t frameOwner = kAbsent;
  std::uint64_t frameIsEntry = kAbsent;  // 3.11: the first frame a _PyEval_EvalFrameDefault call runs
  std::uint64_t frameLocalsplus = kAbsent;
  // 3.14+: f_executable and the locals are _PyStackRefs, pointers with tag bits below (3 in
  // the default build; both bits set: an int held in the reference itself).
  std::uint64_t stackRefTagBits = 0;
  // The owner values of entry frames (no code of their own): 3 (FRAME_OWNED_BY_CSTACK) on
  // 3.12/3.13, 3 and 4 (FRAME_OWNED_BY_INTERPRETER, _CSTACK) on 3.14.
  int shimOwnerFirst = 3, shimOwnerLast = 3;

  std::uint64_t codeFilename = kAbsent;
  std::uint64_t codeName = kAbsent;
  std::uint64_t codeQualname = kAbsent;  // 3.11+
  std::uint64_t codeLinetable = kAbsent;
  std::uint64_t codeFirstlineno = kAbsent;
  std::uint64_t codeAdaptive = kAbsent;         // co_code_adaptive: the bytecode (3.11+)
  std::uint64_t codeLocalsplusnames = kAbsent;  // 3.11+
  std::uint64_t codeVarnames = kAbsent;         // 3.10
  std::uint64_t codeNlocals = kAbsent;          // 3.10

  std::uint64_t tupleSize = kAbsent;
  std::uint64_t tupleItems = kAbsent;
  std::uint64_t listSize = kAbsent;
  std::uint64_t dictUsed = kAbsent;
  std::uint64_t setUsed = kAbsent;
  std::uint64_t floatValue = kAbsent;
  bool longTagged = false;  // 3.12+: lv_tag (sign in the low bits, digits above) instead of ob_size
  std::uint64_t longSize = kAbsent;
  std::uint64_t longDigits = kAbsent;
  std::uint64_t bytesSize = kAbsent;
  std::uint64_t bytesData = kAbsent;
  std::uint64_t unicodeLength = kAbsent;
  std::uint64_t unicodeState = kAbsent;
  std::uint64_t unicodeAsciiSize = kAbsent;    // sizeof(PyASCIIObject): where ASCII text starts
  std::uint64_t unicodeCompactSize = kAbsent;  // sizeof(PyCompactUnicodeObject): where other text starts
  std::uint64_t typeName = kAbsent;            // tp_name

  // PEP 768 (3.14+): where the remote-debugging request of a thread is written.
  std::uint64_t tstateEvalBreaker = kAbsent;         // uintptr_t in PyThreadState
  std::uint64_t tstateRemoteDebugger = kAbsent;      // _PyRemoteDebuggerSupport in PyThreadState
  std::uint64_t interpRemoteDebugEnabled = kAbsent;  // int config.remote_debug in PyInterpreterState
  std::uint64_t debuggerPendingCall = kAbsent;       // int32 in _PyRemoteDebuggerSupport
  std::uint64_t debuggerScriptPath = kAbsent;        // char[] in _PyRemoteDebuggerSupport
  std::uint64_t debuggerScriptPathSize = 0;
  std::uint64_t interpThreadsMain = kAbsent;
};

// The tables generated at build time, one per CPython whose headers the build found.
const std::vector<PyLayout>& builtLayouts();

struct PyLocal {
  std::string name;
  std::string type;   // "int", "list", ...
  std::string value;  // repr-like for simple types; "len=3" for containers; empty otherwise
};

struct PythonFrame {
  std::string function;  // co_qualname (co_name on 3.10)
  std::string file;
  int line = 0;          // 0 when the location table has none for the instruction
  bool isShim = false;   // the entry frame a _PyEval_EvalFrameDefault call pushes (3.12+): no code
  std::uint64_t frameAddr = 0;
  std::size_t evalIndex = 0;  // which _PyEval_EvalFrameDefault call runs it, 0 the innermost
  std::optional<std::vector<PyLocal>> locals;
};

struct PythonThread {
  pid_t tid = 0;                // 0 when no thread of the process matched
  std::uint64_t threadId = 0;   // pthread_t
  std::uint64_t threadState = 0;
  bool holdsGil = false;
  std::vector<PythonFrame> frames;  // innermost first (shims included), at most maxFrames
  std::size_t totalFrames = 0;      // all of them, shims included
  std::size_t evalCalls = 0;        // _PyEval_EvalFrameDefault calls the chain shows
};

struct PythonSnapshot {
  std::string version;  // "3.12.1"
  std::string layoutSource;
  bool gilLocked = false;
  std::vector<PythonThread> threads;
};

struct ReadOptions {
  bool locals = false;
  std::size_t maxFrames = 4096;
  std::size_t maxLocals = 64;  // per frame
};

// What the reader needs of a process: its memory, its mapped files and its threads. A live
// process (process_vm_readv and /proc) or a core file.
class ProcessImage {
 public:
  virtual ~ProcessImage() = default;
  virtual pid_t pid() const = 0;
  virtual std::string describe() const = 0;  // "process 812", "the core core.812"
  virtual bool read(std::uint64_t address, void* buffer, std::size_t size) = 0;
  virtual std::vector<Mapping> mappings() = 0;
  // The files to open for a mapped path, best first (a container's root, a sysroot, the path).
  virtual std::vector<std::string> localPaths(const std::string& mapped) = 0;
  virtual std::set<pid_t> threadIds() = 0;
};

// One Python process, its runtime found and a layout chosen. Reads are not synchronized with
// the process: stop its threads around snapshot() for a consistent picture.
class PyRemote {
 public:
  // forceMinor: use the built table of that minor whatever the process runs (the checks then
  // reject it if it does not fit). Fails with kNoPythonRuntime when no CPython is loaded.
  static Result<std::unique_ptr<PyRemote>> open(pid_t pid, std::optional<int> forceMinor = std::nullopt);
  static Result<std::unique_ptr<PyRemote>> open(std::shared_ptr<ProcessImage> image,
                                                std::optional<int> forceMinor = std::nullopt);
  ~PyRemote();

  const PyLayout& layout() const;
  const std::string& version() const;  // "3.12.1", or "3.10" when only the file name tells
  Result<PythonSnapshot> snapshot(const ReadOptions& options);
  pid_t pid() const;
  // The address of _PyRuntime in the process.
  std::uint64_t runtimeAddress() const;
  // The first interpreter (the main one); 0 when not started or finalized.
  Result<std::uint64_t> mainInterpreter();
  // An exported function or datum of the CPython found (PyRun_SimpleString, ...); 0 when absent.
  std::uint64_t symbolAddress(const std::string& name) const;

  struct State;

 private:
  explicit PyRemote(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Python frames spliced into a native stack (innermost first): each native frame running
// _PyEval_EvalFrameDefault is preceded by the Python frames that call runs. nullopt when the
// stacks do not fit together (the count of such native frames differs from the eval calls
// the Python chain shows); callers then show both.
struct MergedFrame {
  bool python = false;
  std::size_t index = 0;  // into the native list or into PythonThread::frames
};
bool isEvalFrameFunction(const std::string& nativeFunction);
// `cfas`: each native frame's canonical frame address (0 where unknown), innermost first; with
// them a 3.12+ stack is matched by where each eval call's entry frame lives on the C stack,
// which needs no symbols; else (or when that does not fit) by _PyEval_EvalFrameDefault names.
std::optional<std::vector<MergedFrame>> mergeStacks(const std::vector<std::string>& nativeFunctions,
                                                    const PythonThread& thread,
                                                    const std::vector<std::uint64_t>& cfas = {});

// Line of instruction `lasti` (in code units) from a 3.11+ location table, or a 3.10 line table.
int lineFromLocationTable(const std::string& table, int firstLine, std::uint64_t lasti);
int lineFromLineTable310(const std::string& table, int firstLine, std::uint64_t lasti);

}  // namespace strata::python::remote
