// Variables of a stopped frame: DWARF locations, typed values with lazily expanded children.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/native/symbols/stack.hpp"

namespace strata::native::symbols {

// What one frame needs to read its variables. Shared by every value read from the frame.
struct FrameContext {
  std::shared_ptr<ObjectSymbols> symbols;
  std::uint64_t loadBias = 0;
  std::uint64_t pc = 0;            // runtime; a caller's return address minus one
  Dwarf_Off scopeDie = 0;          // this frame's subprogram or inlined_subroutine
  Dwarf_Off subprogramDie = 0;     // the out-of-line function (owner of DW_AT_frame_base)
  RegisterSet registers;
  std::optional<std::uint64_t> cfa;
  MemoryAccess* memory = nullptr;  // must outlive every Value of this frame
  // Frame 0 only: how to change a register (the engine writes the thread's registers).
  std::function<Result<void>(int dwarfRegister, std::uint64_t value)> writeRegister;
  mutable std::optional<std::uint64_t> frameBase;  // DW_AT_frame_base, computed once
  std::uint64_t fileAddress() const { return pc - loadBias; }
};

Result<std::shared_ptr<const FrameContext>> makeFrameContext(StackView& stack, const Frame& frame,
                                                             MemoryAccess& memory);
// The innermost frame straight from a thread's registers, without unwinding: the fast path for
// breakpoint conditions and log messages (the CFA comes from the CFI at the pc).
Result<std::shared_ptr<const FrameContext>> makeTopFrameContext(const ModuleMap& modules,
                                                                const ThreadRegisters& registers,
                                                                MemoryAccess& memory);

struct ValueLocation {
  enum class Kind { Memory, Register, Literal, OptimizedOut };
  Kind kind = Kind::OptimizedOut;
  std::uint64_t address = 0;         // Memory: runtime address
  int reg = -1;                      // Register: DWARF number
  std::vector<std::uint8_t> bytes;   // Literal: the value itself (stack_value, pieces, constants)
};

// Scalar types the evaluator makes up for literals and arithmetic results.
enum class Builtin { None, Bool, Char, Int, Long, ULong, Double, CharPointer, Address };

struct TypeRef {
  Dwarf_Die die{};
  bool hasDie = false;
  Builtin builtin = Builtin::None;
  static TypeRef of(Dwarf_Die d) {
    TypeRef t;
    t.die = d;
    t.hasDie = true;
    return t;
  }
  static TypeRef of(Builtin b) {
    TypeRef t;
    t.builtin = b;
    return t;
  }
};

struct Value {
  std::string name;        // "x", "[3]", "*p", "[raw]", a base class's name
  std::string expression;  // how to reach it from the frame ("pt.x", "v[2]"), empty when none
  TypeRef type;
  ValueLocation location;
  std::shared_ptr<const FrameContext> frame;
  std::uint16_t bitSize = 0;    // bitfields: width and offset from the location's first bit
  std::uint16_t bitOffset = 0;
  bool raw = false;              // show members as declared, not a libstdc++ view
  bool isBaseClass = false;
};

struct Presentation {
  std::string value;  // 42, 'a', "text", 0x7ffd1234 "text", {x=1, y=2}, {size=3}, <optimized out>
  std::string type;   // int, const char *, std::vector<int>
  std::uint64_t namedChildren = 0;
  std::uint64_t indexedChildren = 0;
  std::optional<std::uint64_t> memoryReference;
  bool expandable() const { return namedChildren + indexedChildren > 0; }
};

enum class ChildFilter { All, Named, Indexed };

// Child counts come from types and sizes, never from reading every child, so a huge array
// or vector is paged by the caller.
Presentation present(const Value& value);
Result<std::vector<Value>> children(const Value& value, ChildFilter filter, std::uint64_t start,
                                    std::uint64_t count);

// Scopes of a frame.
Result<std::vector<Value>> localsOf(const std::shared_ptr<const FrameContext>& frame);  // parameters first
Result<std::vector<Value>> globalsOf(const std::shared_ptr<const FrameContext>& frame);  // the frame's CU
std::vector<std::pair<std::string, std::string>> registersOf(const FrameContext& frame);
// Frame 0 with every register the thread has: flags, segments, xmm0-15 when fpr was read.
std::vector<std::pair<std::string, std::string>> registersOf(const ThreadRegisters& registers);

// A variable visible at the frame's pc: locals (innermost first), the CU's globals, then any
// global of the same object file.
Result<Value> lookupVariable(const std::shared_ptr<const FrameContext>& frame, std::string_view name);

// The same lookup in two halves, so a condition resolves a name once per location and then
// only re-reads the variable's location on each hit.
struct ResolvedName {
  Dwarf_Off die = 0;
  bool viaThis = false;  // die is `this`; the name is a member of *this
};
Result<ResolvedName> resolveVariable(const std::shared_ptr<const FrameContext>& frame, std::string_view name);
Result<Value> valueOf(const std::shared_ptr<const FrameContext>& frame, const ResolvedName& resolved,
                      std::string_view name);

// setVariable for scalars, enums and pointers: parses text by the value's type and writes it
// through memory or the frame's register writer. Returns the new presentation.
Result<Presentation> setValue(const Value& value, std::string_view text);

// Low-level pieces the evaluator and the pretty views share.
Dwarf_Die stripCvTypedefs(Dwarf_Die type);
std::string typeName(const TypeRef& type);
std::optional<std::uint64_t> typeSize(const TypeRef& type);
Result<std::vector<std::uint8_t>> readValueBytes(const Value& value, std::size_t size);
Result<std::uint64_t> readPointer(const Value& value);
// Integer view of a scalar (bitfields extracted, sign extended); floats are converted.
Result<std::int64_t> readInteger(const Value& value);
Result<double> readDouble(const Value& value);
bool isFloating(const TypeRef& type);
bool isSigned(const TypeRef& type);
bool isPointerLike(const TypeRef& type);  // pointers and arrays
bool isScalar(const TypeRef& type);
// The pointed-to (or element) type; false for void pointers.
bool pointeeType(const TypeRef& type, Dwarf_Die* out);
Value memoryValue(std::shared_ptr<const FrameContext> frame, std::string name, TypeRef type,
                  std::uint64_t address);
Value literalValue(std::shared_ptr<const FrameContext> frame, TypeRef type, const void* bytes,
                   std::size_t size);
// A struct/class/union member (searching base classes), as a value inside `object`.
std::optional<Value> memberOf(const Value& object, std::string_view member);

}  // namespace strata::native::symbols
