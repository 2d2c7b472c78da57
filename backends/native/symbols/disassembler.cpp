// Disassembler: capstone over bytes read from the target, annotated with symbols and lines.
#include "strata/native/symbols/disassembler.hpp"

#include <capstone/capstone.h>

#include "internal.hpp"

namespace strata::native::symbols {

Result<std::unique_ptr<Disassembler>> Disassembler::create() {
  std::unique_ptr<Disassembler> self(new Disassembler());
  csh handle = 0;
  cs_err err = cs_open(CS_ARCH_X86, CS_MODE_64, &handle);
  if (err != CS_ERR_OK) return Error{errors::kDisassemblerFailed, std::string("cs_open: ") + cs_strerror(err), true};
  self->handle_ = handle;
  return self;
}

Disassembler::~Disassembler() {
  if (handle_ != 0) {
    csh handle = handle_;
    cs_close(&handle);
  }
}

// Reads as much of [address, address+size) as is mapped, page by page (internal.hpp).
std::vector<std::uint8_t> detail::readAvailable(MemoryAccess& memory, std::uint64_t address, std::size_t size) {
  std::vector<std::uint8_t> out;
  while (out.size() < size) {
    std::uint64_t at = address + out.size();
    std::size_t chunk = std::min<std::size_t>(size - out.size(), 4096 - (at % 4096));
    std::vector<std::uint8_t> buf(chunk);
    if (!memory.read(at, buf.data(), chunk)) break;
    out.insert(out.end(), buf.begin(), buf.end());
  }
  return out;
}

namespace {

void annotate(Instruction& insn, const ModuleMap& modules) {
  const Module* m = modules.moduleFor(insn.address);
  if (m == nullptr) return;
  std::uint64_t fileAddress = insn.address - m->object.loadBias;
  if (auto fn = m->symbols->functionAt(fileAddress)) {
    std::string prefix = fn->hasDebugInfo ? "" : m->name() + "!";
    insn.symbol = prefix + fn->name + "+" + std::to_string(fileAddress - fn->low);
    if (fn->hasDebugInfo) insn.location = m->symbols->locationForAddress(fileAddress);
  } else {
    insn.symbol = modules.describe(insn.address);
  }
}

}  // namespace

Result<std::vector<Instruction>> Disassembler::disassemble(MemoryAccess& memory, const ModuleMap& modules,
                                                           std::uint64_t address, std::size_t count) {
  std::vector<Instruction> out;
  std::vector<std::uint8_t> code = detail::readAvailable(memory, address, count * 15);  // 15: longest x86 instruction
  if (code.empty()) return Error{errors::kMemoryUnreadable, "cannot read memory at " + detail::hexAddress(address), true};
  std::size_t offset = 0;
  while (out.size() < count && offset < code.size()) {
    cs_insn* insn = nullptr;
    std::size_t n = cs_disasm(handle_, code.data() + offset, code.size() - offset, address + offset,
                              count - out.size(), &insn);
    for (std::size_t i = 0; i < n; ++i) {
      Instruction x;
      x.address = insn[i].address;
      x.bytes.assign(insn[i].bytes, insn[i].bytes + insn[i].size);
      x.mnemonic = insn[i].mnemonic;
      x.operands = insn[i].op_str;
      offset += insn[i].size;
      out.push_back(std::move(x));
    }
    if (insn != nullptr) cs_free(insn, n);
    if (out.size() < count && offset < code.size() && n == 0) {
      // capstone stops at bytes it cannot decode: show one and go on after it.
      Instruction bad;
      bad.address = address + offset;
      bad.bytes = {code[offset]};
      bad.mnemonic = "(bad)";
      out.push_back(std::move(bad));
      ++offset;
    } else if (n == 0) {
      break;
    }
  }
  for (Instruction& x : out) annotate(x, modules);
  return out;
}

}  // namespace strata::native::symbols
