// Tests: disassembly from target memory with symbols and source lines.
#include <doctest.h>

#include "strata/native/symbols/disassembler.hpp"
#include "test_support.hpp"

using namespace strata::native::symbols;
using namespace strata::native::symbols::test;

TEST_CASE("disassembly at a function entry names mnemonics, symbol+offset and lines") {
  Stopped s;
  s.run(STRATA_SYM_C, 1);
  const Module* exe = nullptr;
  for (const Module& m : s.modules->modules())
    if (m.name() == "strata_sym_c") exe = &m;
  REQUIRE(exe != nullptr);
  auto fns = exe->symbols->functionsNamed("add_points");
  REQUIRE(fns.ok());
  std::uint64_t entry = fns->front().entry + exe->object.loadBias;
  auto dis = Disassembler::create();
  REQUIRE(dis.ok());
  auto insns = (*dis)->disassemble(s.process->memory(), *s.modules, entry, 6);
  REQUIRE_MESSAGE(insns.ok(), (insns.ok() ? "" : insns.error().message));
  REQUIRE(insns->size() == 6);
  CHECK((*insns)[0].mnemonic == "push");
  CHECK((*insns)[0].operands == "rbp");
  CHECK((*insns)[0].symbol == "add_points+0");
  CHECK((*insns)[1].mnemonic == "mov");
  CHECK((*insns)[1].operands == "rbp, rsp");
  CHECK((*insns)[1].symbol == "add_points+1");
  REQUIRE((*insns)[0].location);
  CHECK((*insns)[0].location->line == markerLine(STRATA_SYM_C_SRC, "@line:add_body") - 1);
  CHECK((*insns)[1].address == entry + 1);
  // Code without debug info is still annotated from the symbol table.
  auto raiseAt = s.stack->frames(0, 1)[0].pc;
  auto inLibc = (*dis)->disassemble(s.process->memory(), *s.modules, raiseAt, 1);
  REQUIRE(inLibc.ok());
  CHECK_FALSE((*inLibc)[0].symbol.empty());
  CHECK_FALSE((*dis)->disassemble(s.process->memory(), *s.modules, 8, 4).ok());
}
