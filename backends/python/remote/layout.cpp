// Choosing a PyLayout: the process's own _Py_DebugOffsets (3.13, 3.14), or a table built from headers.
#include "strata/python/remote/layout.hpp"

#include <cstring>

namespace strata::python::remote {

namespace {

// _Py_DebugOffsets as CPython 3.13 lays it out (Include/internal/pycore_runtime.h); 3.14 adds
// fields in the middle, so each minor is read through a mirror of its own.
struct DebugOffsets313 {
  char cookie[8];
  std::uint64_t version;
  std::uint64_t freeThreaded;
  struct { std::uint64_t size, finalizing, interpretersHead; } runtime;
  struct {
    std::uint64_t size, id, next, threadsHead, gc, importsModules, sysdict, builtins, cevalGil, gilRuntimeState,
        gilRuntimeStateEnabled, gilRuntimeStateLocked, gilRuntimeStateHolder;
  } interp;
  struct { std::uint64_t size, prev, next, interp, currentFrame, threadId, nativeThreadId, datastackChunk, status; } thread;
  struct { std::uint64_t size, previous, executable, instrPtr, localsplus, owner; } frame;
  struct {
    std::uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
        coCodeAdaptive;
  } code;
  struct { std::uint64_t size, obType; } object;
  struct { std::uint64_t size, tpName, tpRepr, tpFlags; } type;
  struct { std::uint64_t size, obItem, obSize; } tuple;
  struct { std::uint64_t size, obItem, obSize; } list;
  struct { std::uint64_t size, maKeys, maValues; } dict;
  struct { std::uint64_t size, obFval; } floatObject;
  struct { std::uint64_t size, lvTag, obDigit; } longObject;
  struct { std::uint64_t size, obSize, obSval; } bytes;
  struct { std::uint64_t size, state, length, asciiobjectSize; } unicode;
  struct { std::uint64_t size, collecting; } gc;
};

// The same, as CPython 3.14 lays it out (Include/internal/pycore_debug_offsets.h): fields
// added inside the interpreter, frame and code sections, set and generator sections, and the
// PEP 768 debugger support at the end.
struct DebugOffsets314 {
  char cookie[8];
  std::uint64_t version;
  std::uint64_t freeThreaded;
  struct { std::uint64_t size, finalizing, interpretersHead; } runtime;
  struct {
    std::uint64_t size, id, next, threadsHead, threadsMain, gc, importsModules, sysdict, builtins, cevalGil,
        gilRuntimeState, gilRuntimeStateEnabled, gilRuntimeStateLocked, gilRuntimeStateHolder, codeObjectGeneration,
        tlbcGeneration;
  } interp;
  struct { std::uint64_t size, prev, next, interp, currentFrame, threadId, nativeThreadId, datastackChunk, status; } thread;
  struct { std::uint64_t size, previous, executable, instrPtr, localsplus, owner, stackpointer, tlbcIndex; } frame;
  struct {
    std::uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
        coCodeAdaptive, coTlbc;
  } code;
  struct { std::uint64_t size, obType; } object;
  struct { std::uint64_t size, tpName, tpRepr, tpFlags; } type;
  struct { std::uint64_t size, obItem, obSize; } tuple;
  struct { std::uint64_t size, obItem, obSize; } list;
  struct { std::uint64_t size, used, table, mask; } set;
  struct { std::uint64_t size, maKeys, maValues; } dict;
  struct { std::uint64_t size, obFval; } floatObject;
  struct { std::uint64_t size, lvTag, obDigit; } longObject;
  struct { std::uint64_t size, obSize, obSval; } bytes;
  struct { std::uint64_t size, state, length, asciiobjectSize; } unicode;
  struct { std::uint64_t size, collecting; } gc;
  struct { std::uint64_t size, giName, giIframe, giFrameState; } gen;
  struct { std::uint64_t next, prev; } llistNode;
  struct {
    std::uint64_t evalBreaker, remoteDebuggerSupport, remoteDebuggingEnabled, debuggerPendingCall, debuggerScriptPath,
        debuggerScriptPathSize;
  } debugger;
};

// The fields both minors share, from either mirror.
template <class D>
void fillCommon(PyLayout& L, const D& d) {
  L.versionHex = d.version;
  L.source = "the _Py_DebugOffsets of the process (CPython " + versionText(d.version) + ")";
  L.runtimeInterpretersHead = d.runtime.interpretersHead;
  L.runtimeFinalizing = d.runtime.finalizing;
  // The interpreter's ceval.gil points at the GIL it uses (its own _gil for the main one).
  L.gilPlace = GilPlace::InterpreterPointer;
  L.gilOffset = d.interp.cevalGil;
  L.gilLocked = d.interp.gilRuntimeStateLocked - d.interp.gilRuntimeState;
  L.gilLastHolder = d.interp.gilRuntimeStateHolder - d.interp.gilRuntimeState;
  L.interpThreadsHead = d.interp.threadsHead;
  L.tstateNext = d.thread.next;
  L.tstateInterp = d.thread.interp;
  L.tstateThreadId = d.thread.threadId;
  L.tstateNativeThreadId = d.thread.nativeThreadId;
  L.tstateFrame = d.thread.currentFrame;
  L.framePrevious = d.frame.previous;
  L.frameCode = d.frame.executable;
  L.frameInstr = d.frame.instrPtr;
  L.frameOwner = d.frame.owner;
  L.frameLocalsplus = d.frame.localsplus;
  L.codeFilename = d.code.filename;
  L.codeName = d.code.name;
  L.codeQualname = d.code.qualname;
  L.codeLinetable = d.code.linetable;
  L.codeFirstlineno = d.code.firstlineno;
  L.codeAdaptive = d.code.coCodeAdaptive;
  L.codeLocalsplusnames = d.code.localsplusnames;
  L.tupleSize = d.tuple.obSize;
  L.tupleItems = d.tuple.obItem;
  L.listSize = d.list.obSize;
  // ma_used and a set's `used` sit right after the object header in every CPython 3.x; the
  // 3.13 debug offsets do not list them.
  L.dictUsed = 16;
  L.setUsed = 24;
  L.floatValue = d.floatObject.obFval;
  L.longTagged = true;
  L.longSize = d.longObject.lvTag;
  L.longDigits = d.longObject.obDigit;
  L.bytesSize = d.bytes.obSize;
  L.bytesData = d.bytes.obSval;
  L.unicodeLength = d.unicode.length;
  L.unicodeState = d.unicode.state;
  L.unicodeAsciiSize = d.unicode.asciiobjectSize;
  // PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject.
  L.unicodeCompactSize = d.unicode.asciiobjectSize + 16;
  L.typeName = d.type.tpName;
}

}  // namespace

std::string versionText(std::uint64_t hex) {
  std::string v = std::to_string((hex >> 24) & 0xff) + "." + std::to_string((hex >> 16) & 0xff) + "." +
                  std::to_string((hex >> 8) & 0xff);
  unsigned level = (hex >> 4) & 0xf;
  if (level != 0xf) v += (level == 0xa ? "a" : level == 0xb ? "b" : "rc") + std::to_string(hex & 0xf);
  return v;
}

std::string builtMinorsText() {
  std::string out;
  for (const PyLayout& l : builtLayouts()) {
    std::string v = "3." + std::to_string(l.minor);
    if (out.find(v) != std::string::npos) continue;
    out += (out.empty() ? "" : ", ") + v;
  }
  return out.empty() ? "none" : out;
}

Result<PyLayout> builtLayoutFor(int minor, std::uint64_t versionHex) {
  const PyLayout* sameMinor = nullptr;
  for (const PyLayout& l : builtLayouts()) {
    if (l.minor != minor) continue;
    if (versionHex != 0 && l.versionHex == versionHex) return l;
    if (!sameMinor) sameMinor = &l;
  }
  if (sameMinor) return *sameMinor;
  return Error{errors::kPythonLayout,
               "no layout for CPython 3." + std::to_string(minor) + ": this Strata was built with tables for " +
                   builtMinorsText() + " (a table comes from the internal headers of each CPython 3.10-3.12 the build finds)"};
}

Result<PyLayout> layoutFromDebugOffsets(const void* bytes, std::size_t size, std::uint64_t versionHex) {
  if (size < sizeof(DebugOffsets314) || size < sizeof(DebugOffsets313))
    return Error{errors::kPythonLayout, "the _Py_DebugOffsets read is too short"};
  char cookie[8];
  std::uint64_t version = 0, freeThreaded = 0;
  std::memcpy(cookie, bytes, 8);
  std::memcpy(&version, static_cast<const char*>(bytes) + 8, 8);
  std::memcpy(&freeThreaded, static_cast<const char*>(bytes) + 16, 8);
  if (std::memcmp(cookie, "xdebugpy", 8) != 0)
    return Error{errors::kPythonLayout, "_PyRuntime does not start with the \"xdebugpy\" cookie of _Py_DebugOffsets"};
  if ((version >> 16) != (versionHex >> 16))
    return Error{errors::kPythonLayout, "_Py_DebugOffsets says CPython " + versionText(version) + " but Py_Version says " +
                                            versionText(versionHex)};
  int minor = static_cast<int>((version >> 16) & 0xff);
  if (minor != 13 && minor != 14)
    return Error{errors::kPythonLayout, "CPython " + versionText(version) +
                                            "'s _Py_DebugOffsets are not known to this Strata (it reads those of 3.13 and 3.14)"};
  if (freeThreaded != 0)
    return Error{errors::kPythonLayout, "free-threaded CPython builds are not supported (this one is " + versionText(version) + "t)"};
  PyLayout L;
  L.minor = minor;
  if (minor == 13) {
    DebugOffsets313 d;
    std::memcpy(&d, bytes, sizeof d);
    fillCommon(L, d);
    return L;
  }
  DebugOffsets314 d;
  std::memcpy(&d, bytes, sizeof d);
  fillCommon(L, d);
  L.setUsed = d.set.used;
  L.stackRefTagBits = 3;
  L.shimOwnerFirst = 3;  // FRAME_OWNED_BY_INTERPRETER
  L.shimOwnerLast = 4;   // FRAME_OWNED_BY_CSTACK
  L.interpThreadsMain = d.interp.threadsMain;
  L.tstateEvalBreaker = d.debugger.evalBreaker;
  L.tstateRemoteDebugger = d.debugger.remoteDebuggerSupport;
  L.interpRemoteDebugEnabled = d.debugger.remoteDebuggingEnabled;
  L.debuggerPendingCall = d.debugger.debuggerPendingCall;
  L.debuggerScriptPath = d.debugger.debuggerScriptPath;
  L.debuggerScriptPathSize = d.debugger.debuggerScriptPathSize;
  return L;
}

}  // namespace strata::python::remote
