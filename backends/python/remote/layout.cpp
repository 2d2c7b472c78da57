// Choosing a PyLayout: the process's own _Py_DebugOffsets (3.13), or a table built from headers.
#include "layout.hpp"

#include <cstring>

namespace strata::python::remote {

namespace {

// _Py_DebugOffsets as CPython 3.13 lays it out (Include/internal/pycore_runtime.h); other
// minors order it differently, so only a 3.13 process is read through this mirror.
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
  DebugOffsets313 d;
  if (size < sizeof d) return Error{errors::kPythonLayout, "the _Py_DebugOffsets read is too short"};
  std::memcpy(&d, bytes, sizeof d);
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0)
    return Error{errors::kPythonLayout, "_PyRuntime does not start with the \"xdebugpy\" cookie of _Py_DebugOffsets"};
  if ((d.version >> 16) != (versionHex >> 16))
    return Error{errors::kPythonLayout, "_Py_DebugOffsets says CPython " + versionText(d.version) + " but Py_Version says " +
                                            versionText(versionHex)};
  if (((d.version >> 16) & 0xff) != 13)
    return Error{errors::kPythonLayout,
                 "CPython " + versionText(d.version) + "'s _Py_DebugOffsets are not known to this Strata (it reads 3.13's)"};
  if (d.freeThreaded != 0)
    return Error{errors::kPythonLayout, "free-threaded CPython builds are not supported (this one is " + versionText(d.version) + "t)"};
  PyLayout L;
  L.minor = 13;
  L.versionHex = d.version;
  L.source = "the _Py_DebugOffsets of the process (CPython " + versionText(d.version) + ")";
  L.runtimeInterpretersHead = d.runtime.interpretersHead;
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
  // debug offsets do not list them.
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
  return L;
}

}  // namespace strata::python::remote
