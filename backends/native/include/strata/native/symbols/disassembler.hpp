// Disassembly with capstone: instructions from target memory with their symbol and source line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/native/symbols/module_map.hpp"

namespace strata::native::symbols {

struct Instruction {
  std::uint64_t address = 0;  // runtime
  std::vector<std::uint8_t> bytes;
  std::string mnemonic;   // "push"
  std::string operands;   // "rbp"
  std::string symbol;     // "main+4", "libc.so.6!raise+17"; empty when unknown
  std::optional<SourceLocation> location;
};

class Disassembler {
 public:
  static Result<std::unique_ptr<Disassembler>> create();
  ~Disassembler();
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;
  // Reads through MemoryAccess (so inserted breakpoints stay invisible). Stops early at
  // unreadable memory; an undecodable byte becomes a one-byte "(bad)" instruction.
  Result<std::vector<Instruction>> disassemble(MemoryAccess& memory, const ModuleMap& modules,
                                               std::uint64_t address, std::size_t count);

 private:
  Disassembler() = default;
  std::size_t handle_ = 0;  // csh
};

}  // namespace strata::native::symbols
