// Every conversion from the symbols library's types to the debugger facade's, in one place.
#include "convert.hpp"

#include <cstdio>

namespace strata::native::debugger {

FrameEntry toFrameEntry(const sym::Frame& f, int id) {
  FrameEntry out;
  out.id = id;
  out.name = f.function;
  out.pc = f.pc;
  out.hasDebugInfo = f.hasDebugInfo;
  out.inlined = f.inlined;
  out.module = f.moduleName;
  out.moduleOffset = f.pc - f.loadBias;
  if (f.location) {
    out.file = f.location->file;
    out.line = f.location->line;
    out.column = f.location->column;
  }
  return out;
}

Variable toVariable(const sym::Value& value) {
  auto shown = sym::present(value);
  Variable v;
  v.name = value.name;
  v.value = shown.value;
  v.type = shown.type;
  v.evaluateName = value.expression;
  v.namedChildren = shown.namedChildren;
  v.indexedChildren = shown.indexedChildren;
  v.memoryReference = shown.memoryReference;
  if (value.type.hasDie && value.location.kind != sym::ValueLocation::Kind::OptimizedOut) {
    // A pointer's memory is what it points to (what a memory view opened on it should show).
    Dwarf_Die type = sym::stripCvTypedefs(value.type.die);
    if (dwarf_tag(&type) == DW_TAG_pointer_type) {
      auto target = sym::readPointer(value);
      v.memoryReference = target ? std::optional<std::uint64_t>(*target) : std::nullopt;
    }
  }
  return v;
}

Variable registerVariable(const std::string& name, const std::string& value) {
  return Variable{name, value, "", "$" + name, 0, 0, 0, {}};
}

DisassembledInstruction toDisassembled(const sym::Instruction& ins) {
  DisassembledInstruction d;
  d.address = ins.address;
  char hex[4];
  for (std::size_t i = 0; i < ins.bytes.size(); ++i) {
    std::snprintf(hex, sizeof hex, "%02x", ins.bytes[i]);
    if (i) d.bytes += ' ';
    d.bytes += hex;
  }
  d.instruction = ins.operands.empty() ? ins.mnemonic : ins.mnemonic + " " + ins.operands;
  d.symbol = ins.symbol;
  if (ins.location) {
    d.file = ins.location->file;
    d.line = ins.location->line;
  }
  return d;
}

ModuleEntry toModuleEntry(const sym::Module& m) {
  ModuleEntry e;
  e.path = m.object.path;
  e.name = m.name();
  e.low = m.low;
  e.high = m.high;
  e.hasDebugInfo = m.symbols && m.symbols->hasDebugInfo();
  return e;
}

}  // namespace strata::native::debugger
