// The debugger's one conversion boundary: the symbols library's frames, values, instructions and
// modules made into the facade's own types. Ids and handles are the caller's to add.
#pragma once

#include <string>

#include "internal.hpp"

namespace strata::native::debugger {

FrameEntry toFrameEntry(const sym::Frame& frame, int id);
// A value as the facade shows it; variablesReference is 0 (the caller hands out a handle when
// it has children). A pointer's memory reference is what it points to.
Variable toVariable(const sym::Value& value);
Variable registerVariable(const std::string& name, const std::string& value);
DisassembledInstruction toDisassembled(const sym::Instruction& instruction);
ModuleEntry toModuleEntry(const sym::Module& module);

// `count` instructions around `address` (instructionOffset of them before it when negative: x86
// decodes only forward, so from the function's start), unreadable ones as "??" placeholders;
// what disassembleAround answers, for any memory (a live process, a core file).
Result<std::vector<DisassembledInstruction>> disassembleWindow(sym::Disassembler& disassembler, MemoryAccess& memory,
                                                               const sym::ModuleMap& modules, std::uint64_t address,
                                                               std::int64_t instructionOffset, std::size_t count);

}  // namespace strata::native::debugger
