// DWARF location expressions and the variables of a frame: locals, the CU's globals, registers.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "internal.hpp"
#include "strata/native/symbols/values.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

using detail::hexAddress;

namespace {

Error optimizedOut() { return Error{errors::kOptimizedOut, "<optimized out>", true}; }

Result<std::uint64_t> frameBase(const FrameContext& f);

// Evaluates one location expression. Pieces are assembled into literal bytes.
Result<ValueLocation> evaluateOps(const FrameContext& f, Dwarf_Attribute* attr, Dwarf_Op* ops, std::size_t n) {
  std::vector<std::uint64_t> stack;
  std::vector<std::uint8_t> pieces;
  bool piecewise = false;
  ValueLocation current;  // set by reg/stack_value/implicit ops; else the stack top is an address
  bool haveCurrent = false;
  auto pop = [&]() -> Result<std::uint64_t> {
    if (stack.empty()) return Error{errors::kBadDebugInfo, "malformed DWARF expression (stack underflow)", true};
    std::uint64_t v = stack.back();
    stack.pop_back();
    return v;
  };
  auto readRegister = [&](int reg) -> Result<std::uint64_t> {
    if (!f.registers.has(reg)) return optimizedOut();  // not saved in this caller frame
    return f.registers.value[reg];
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Dwarf_Op& op = ops[i];
    std::uint8_t atom = op.atom;
    if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
      stack.push_back(atom - DW_OP_lit0);
    } else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
      current = ValueLocation{ValueLocation::Kind::Register, 0, atom - DW_OP_reg0, {}};
      haveCurrent = true;
    } else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
      auto r = readRegister(atom - DW_OP_breg0);
      if (!r) return r.takeError();
      stack.push_back(*r + static_cast<std::int64_t>(op.number));
    } else {
      switch (atom) {
        case DW_OP_addr:
          stack.push_back(op.number + f.loadBias);
          break;
        case DW_OP_addrx:
        case DW_OP_GNU_addr_index:
        case DW_OP_constx:
        case DW_OP_GNU_const_index: {
          Dwarf_Attribute result;
          Dwarf_Addr a = 0;
          if (dwarf_getlocation_attr(attr, &op, &result) != 0 || dwarf_formaddr(&result, &a) != 0)
            return Error{errors::kBadDebugInfo, detail::dwError("dwarf_getlocation_attr"), true};
          stack.push_back(atom == DW_OP_addrx || atom == DW_OP_GNU_addr_index ? a + f.loadBias : a);
          break;
        }
        case DW_OP_regx:
          current = ValueLocation{ValueLocation::Kind::Register, 0, static_cast<int>(op.number), {}};
          haveCurrent = true;
          break;
        case DW_OP_bregx: {
          auto r = readRegister(static_cast<int>(op.number));
          if (!r) return r.takeError();
          stack.push_back(*r + static_cast<std::int64_t>(op.number2));
          break;
        }
        case DW_OP_fbreg: {
          auto base = frameBase(f);
          if (!base) return base.takeError();
          stack.push_back(*base + static_cast<std::int64_t>(op.number));
          break;
        }
        case DW_OP_call_frame_cfa:
          if (!f.cfa) return Error{errors::kBadDebugInfo, "the frame's CFA is unknown", true};
          stack.push_back(*f.cfa);
          break;
        case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u: case DW_OP_constu:
        case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s: case DW_OP_consts:
          stack.push_back(op.number);
          break;
        case DW_OP_dup:
          if (stack.empty()) return Error{errors::kBadDebugInfo, "malformed DWARF expression", true};
          stack.push_back(stack.back());
          break;
        case DW_OP_drop:
          if (auto v = pop(); !v) return v.takeError();
          break;
        case DW_OP_plus_uconst: {
          auto v = pop();
          if (!v) return v.takeError();
          stack.push_back(*v + op.number);
          break;
        }
        case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and: case DW_OP_or:
        case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: {
          auto b = pop();
          if (!b) return b.takeError();
          auto a = pop();
          if (!a) return a.takeError();
          std::uint64_t x = *a, y = *b, r = 0;
          switch (atom) {
            case DW_OP_plus: r = x + y; break;
            case DW_OP_minus: r = x - y; break;
            case DW_OP_mul: r = x * y; break;
            case DW_OP_and: r = x & y; break;
            case DW_OP_or: r = x | y; break;
            case DW_OP_xor: r = x ^ y; break;
            case DW_OP_shl: r = x << y; break;
            case DW_OP_shr: r = x >> y; break;
            default: r = static_cast<std::uint64_t>(static_cast<std::int64_t>(x) >> y); break;
          }
          stack.push_back(r);
          break;
        }
        case DW_OP_neg: case DW_OP_not: {
          auto v = pop();
          if (!v) return v.takeError();
          stack.push_back(atom == DW_OP_neg ? -*v : ~*v);
          break;
        }
        case DW_OP_deref: case DW_OP_deref_size: {
          auto a = pop();
          if (!a) return a.takeError();
          std::uint64_t v = 0;
          std::size_t size = atom == DW_OP_deref ? 8 : std::min<std::size_t>(8, op.number);
          if (auto r = f.memory->read(*a, &v, size); !r) return r.takeError();
          stack.push_back(v);
          break;
        }
        case DW_OP_stack_value: {
          auto v = pop();
          if (!v) return v.takeError();
          current = ValueLocation{ValueLocation::Kind::Literal, 0, -1, {}};
          current.bytes.resize(8);
          std::memcpy(current.bytes.data(), &*v, 8);
          haveCurrent = true;
          break;
        }
        case DW_OP_implicit_value: {
          Dwarf_Block block;
          if (dwarf_getlocation_implicit_value(attr, &op, &block) != 0)
            return Error{errors::kBadDebugInfo, detail::dwError("dwarf_getlocation_implicit_value"), true};
          current = ValueLocation{ValueLocation::Kind::Literal, 0, -1, {block.data, block.data + block.length}};
          haveCurrent = true;
          break;
        }
        case DW_OP_piece: {
          piecewise = true;
          std::size_t size = op.number;
          std::vector<std::uint8_t> bytes(size, 0);
          if (!haveCurrent && !stack.empty()) {
            if (auto r = f.memory->read(stack.back(), bytes.data(), size); !r) return r.takeError();
            stack.pop_back();
          } else if (haveCurrent && current.kind == ValueLocation::Kind::Register) {
            auto r = readRegister(current.reg);
            if (!r) return r.takeError();
            std::memcpy(bytes.data(), &*r, std::min<std::size_t>(size, 8));
          } else if (haveCurrent && current.kind == ValueLocation::Kind::Literal) {
            std::memcpy(bytes.data(), current.bytes.data(), std::min(size, current.bytes.size()));
          } else {
            return optimizedOut();  // an empty piece: that part was optimized away
          }
          pieces.insert(pieces.end(), bytes.begin(), bytes.end());
          haveCurrent = false;
          break;
        }
        case DW_OP_nop:
          break;
        default:
          // DW_OP_entry_value and friends need the caller's state at the call: not recoverable here.
          return optimizedOut();
      }
    }
  }
  if (piecewise) return ValueLocation{ValueLocation::Kind::Literal, 0, -1, std::move(pieces)};
  if (haveCurrent) return current;
  if (stack.empty()) return optimizedOut();
  return ValueLocation{ValueLocation::Kind::Memory, stack.back(), -1, {}};
}

Result<ValueLocation> evaluateAttribute(const FrameContext& f, Dwarf_Attribute* attr) {
  Dwarf_Op* expr = nullptr;
  std::size_t len = 0;
  int n = dwarf_getlocation_addr(attr, f.fileAddress(), &expr, &len, 1);
  if (n < 0) return Error{errors::kBadDebugInfo, detail::dwError("dwarf_getlocation_addr"), true};
  if (n == 0 || len == 0) return ValueLocation{};  // no location at this pc: optimized out
  return evaluateOps(f, attr, expr, len);
}

Result<std::uint64_t> frameBase(const FrameContext& f) {
  if (f.frameBase) return *f.frameBase;
  Dwarf_Die fn;
  Dwarf_Attribute attr;
  if (f.subprogramDie == 0 || dwarf_offdie(f.symbols->dwarf(), f.subprogramDie, &fn) == nullptr ||
      dwarf_attr(&fn, DW_AT_frame_base, &attr) == nullptr)
    return Error{errors::kBadDebugInfo, "the function has no frame base", true};
  auto loc = evaluateAttribute(f, &attr);
  if (!loc) return loc.takeError();
  std::optional<std::uint64_t> base;
  if (loc->kind == ValueLocation::Kind::Memory) base = loc->address;
  if (loc->kind == ValueLocation::Kind::Register && f.registers.has(loc->reg)) base = f.registers.value[loc->reg];
  if (!base) return optimizedOut();
  f.frameBase = base;  // every variable of the frame needs it; the frame is fixed while stopped
  return *base;
}

}  // namespace

Result<ValueLocation> locationOf(const FrameContext& f, Dwarf_Die* variable) {
  Dwarf_Attribute attr;
  if (dwarf_attr(variable, DW_AT_location, &attr) != nullptr) {
    auto loc = evaluateAttribute(f, &attr);
    if (!loc && loc.error().message == "<optimized out>") return ValueLocation{};
    return loc;
  }
  if (dwarf_attr_integrate(variable, DW_AT_const_value, &attr) != nullptr) {
    ValueLocation lit{ValueLocation::Kind::Literal, 0, -1, {}};
    Dwarf_Block block;
    Dwarf_Sword s = 0;
    if (dwarf_formblock(&attr, &block) == 0) {
      lit.bytes.assign(block.data, block.data + block.length);
    } else if (dwarf_formsdata(&attr, &s) == 0) {
      lit.bytes.resize(8);
      std::memcpy(lit.bytes.data(), &s, 8);
    } else {
      return Error{errors::kBadDebugInfo, detail::dwError("DW_AT_const_value"), true};
    }
    return lit;
  }
  return ValueLocation{};
}

Result<std::shared_ptr<const FrameContext>> makeFrameContext(StackView& stack, const Frame& frame,
                                                             MemoryAccess& memory) {
  auto ctx = std::make_shared<FrameContext>();
  const RawFrame& raw = stack.raw(frame.physicalIndex);
  ctx->symbols = frame.symbols;
  ctx->loadBias = frame.loadBias;
  ctx->pc = raw.lookupPc();
  ctx->scopeDie = frame.scopeDie;
  ctx->registers = raw.registers;
  if (raw.cfaKnown) ctx->cfa = raw.cfa;
  ctx->memory = &memory;
  if (ctx->symbols && ctx->symbols->hasDebugInfo()) {
    auto scopes = ctx->symbols->scopesAt(ctx->fileAddress());
    if (!scopes.empty()) ctx->subprogramDie = dwarf_dieoffset(&scopes.back());
  }
  return std::shared_ptr<const FrameContext>(std::move(ctx));
}

Result<std::shared_ptr<const FrameContext>> makeTopFrameContext(const ModuleMap& modules,
                                                                const ThreadRegisters& registers,
                                                                MemoryAccess& memory) {
  auto ctx = std::make_shared<FrameContext>();
  ctx->registers = registersFrom(registers);
  ctx->pc = registers.gpr.rip;
  ctx->memory = &memory;
  const Module* m = modules.moduleFor(ctx->pc);
  if (m == nullptr) return Error{errors::kNoDebugInfo, "no module holds " + hexAddress(ctx->pc), true};
  ctx->symbols = m->symbols;
  ctx->loadBias = m->object.loadBias;
  ctx->cfa = cfaFromCfi(*ctx->symbols, ctx->fileAddress(), ctx->registers);
  if (ctx->symbols->hasDebugInfo()) {
    auto scopes = ctx->symbols->scopesAt(ctx->fileAddress());
    if (!scopes.empty()) ctx->subprogramDie = dwarf_dieoffset(&scopes.back());
    for (Dwarf_Die& d : scopes) {
      int tag = dwarf_tag(&d);
      if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
        ctx->scopeDie = dwarf_dieoffset(&d);
        break;
      }
    }
  }
  return std::shared_ptr<const FrameContext>(std::move(ctx));
}

namespace {

Value variableValue(const std::shared_ptr<const FrameContext>& f, Dwarf_Die* die, std::string name) {
  Value v;
  v.frame = f;
  v.name = name;
  v.expression = std::move(name);
  Dwarf_Attribute attr;
  Dwarf_Die type;
  if (dwarf_attr_integrate(die, DW_AT_type, &attr) != nullptr && dwarf_formref_die(&attr, &type) != nullptr)
    v.type = TypeRef::of(type);
  auto loc = locationOf(*f, die);
  v.location = loc ? std::move(*loc) : ValueLocation{};
  return v;
}

void collectVariables(Dwarf_Die* scope, int wantedTag, std::vector<Dwarf_Die>& out) {
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return;
  do {
    if (dwarf_tag(&child) == wantedTag && detail::integratedName(&child) != nullptr) out.push_back(child);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// The frame's own scope and the lexical blocks inside it that hold the pc, outermost first.
std::vector<Dwarf_Die> frameScopes(const FrameContext& f) {
  std::vector<Dwarf_Die> chain = f.symbols->scopesAt(f.fileAddress());
  std::vector<Dwarf_Die> out;
  auto it = std::find_if(chain.begin(), chain.end(),
                         [&](Dwarf_Die& d) { return dwarf_dieoffset(&d) == f.scopeDie; });
  if (it == chain.end()) return out;
  out.push_back(*it);
  while (it != chain.begin()) {
    --it;
    if (dwarf_tag(&*it) != DW_TAG_lexical_block) break;  // an inlined call belongs to a deeper frame
    out.push_back(*it);
  }
  return out;
}

}  // namespace

Result<std::vector<Value>> localsOf(const std::shared_ptr<const FrameContext>& f) {
  std::vector<Value> out;
  if (!f->symbols || !f->symbols->hasDebugInfo() || f->scopeDie == 0) return out;
  std::vector<Dwarf_Die> scopes = frameScopes(*f);
  if (scopes.empty()) return out;
  std::vector<Dwarf_Die> dies;
  collectVariables(&scopes.front(), DW_TAG_formal_parameter, dies);
  for (Dwarf_Die& s : scopes) collectVariables(&s, DW_TAG_variable, dies);
  for (Dwarf_Die& d : dies) out.push_back(variableValue(f, &d, detail::integratedName(&d)));
  return out;
}

namespace {

void collectGlobals(Dwarf_Die* parent, const std::string& prefix, std::vector<std::pair<std::string, Dwarf_Die>>& out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_variable && dwarf_hasattr(&child, DW_AT_location)) {
      const char* n = detail::integratedName(&child);
      if (n != nullptr) out.emplace_back(prefix + n, child);
    } else if (tag == DW_TAG_namespace) {
      const char* n = dwarf_diename(&child);
      collectGlobals(&child, prefix + (n != nullptr ? n : "(anonymous namespace)") + "::", out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

Result<std::vector<Value>> globalsOf(const std::shared_ptr<const FrameContext>& f) {
  std::vector<Value> out;
  Dwarf_Die cu;
  if (!f->symbols || !f->symbols->cuForAddress(f->fileAddress(), &cu)) return out;
  std::vector<std::pair<std::string, Dwarf_Die>> globals;
  collectGlobals(&cu, "", globals);
  for (auto& [name, die] : globals) out.push_back(variableValue(f, &die, name));
  return out;
}

std::vector<std::pair<std::string, std::string>> registersOf(const FrameContext& f) {
  static const std::pair<const char*, int> order[] = {
      {"rax", 0}, {"rbx", 3}, {"rcx", 2}, {"rdx", 1}, {"rsi", 4}, {"rdi", 5}, {"rbp", 6}, {"rsp", 7},
      {"r8", 8},  {"r9", 9},  {"r10", 10}, {"r11", 11}, {"r12", 12}, {"r13", 13}, {"r14", 14}, {"r15", 15},
      {"rip", 16}};
  std::vector<std::pair<std::string, std::string>> out;
  for (auto [name, reg] : order)
    out.emplace_back(name, f.registers.has(reg) ? hexAddress(f.registers.value[reg]) : "<not saved>");
  return out;
}

Result<ResolvedName> resolveVariable(const std::shared_ptr<const FrameContext>& f, std::string_view name) {
  auto unknown = [&] { return Error{errors::kUnknownName, "no symbol '" + std::string(name) + "' in the current scope", true}; };
  if (!f->symbols || !f->symbols->hasDebugInfo()) return unknown();
  std::vector<Dwarf_Die> dies;
  if (f->scopeDie != 0) {
    std::vector<Dwarf_Die> scopes = frameScopes(*f);
    if (!scopes.empty()) {
      collectVariables(&scopes.front(), DW_TAG_formal_parameter, dies);
      for (Dwarf_Die& s : scopes) collectVariables(&s, DW_TAG_variable, dies);
    }
  }
  // Innermost declarations shadow outer ones.
  for (auto it = dies.rbegin(); it != dies.rend(); ++it)
    if (name == detail::integratedName(&*it)) return ResolvedName{dwarf_dieoffset(&*it), false};
  // Inside a method, a bare member name means this->member.
  for (auto it = dies.rbegin(); it != dies.rend(); ++it) {
    if (std::string_view(detail::integratedName(&*it)) != "this") continue;
    Value self = variableValue(f, &*it, "this");
    auto target = readPointer(self);
    Dwarf_Die pointee;
    if (target && pointeeType(self.type, &pointee) &&
        memberOf(memoryValue(f, "*this", TypeRef::of(pointee), *target), name))
      return ResolvedName{dwarf_dieoffset(&*it), true};
  }
  Dwarf_Die cu;
  if (f->symbols->cuForAddress(f->fileAddress(), &cu)) {
    std::vector<std::pair<std::string, Dwarf_Die>> globals;
    collectGlobals(&cu, "", globals);
    for (auto& [qualified, die] : globals)
      if (qualified == name) return ResolvedName{dwarf_dieoffset(&die), false};
  }
  if (auto off = f->symbols->globalVariableNamed(name)) return ResolvedName{*off, false};
  return unknown();
}

Result<Value> valueOf(const std::shared_ptr<const FrameContext>& f, const ResolvedName& r, std::string_view name) {
  Dwarf_Die die;
  if (dwarf_offdie(f->symbols->dwarf(), r.die, &die) == nullptr) return Error{errors::kBadDebugInfo, detail::dwError("dwarf_offdie"), true};
  if (!r.viaThis) return variableValue(f, &die, std::string(name));
  Value self = variableValue(f, &die, "this");
  auto target = readPointer(self);
  if (!target) return target.takeError();
  Dwarf_Die pointee;
  if (!pointeeType(self.type, &pointee)) return Error{errors::kBadDebugInfo, "'this' has no type", true};
  auto m = memberOf(memoryValue(f, "*this", TypeRef::of(pointee), *target), name);
  if (!m) return Error{errors::kUnknownName, "no symbol '" + std::string(name) + "' in the current scope", true};
  m->expression = "this->" + std::string(name);
  return *m;
}

std::vector<std::pair<std::string, std::string>> registersOf(const ThreadRegisters& t) {
  const user_regs_struct& r = t.gpr;
  const std::pair<const char*, unsigned long long> gpr[] = {
      {"rax", r.rax}, {"rbx", r.rbx}, {"rcx", r.rcx}, {"rdx", r.rdx}, {"rsi", r.rsi}, {"rdi", r.rdi},
      {"rbp", r.rbp}, {"rsp", r.rsp}, {"r8", r.r8},   {"r9", r.r9},   {"r10", r.r10}, {"r11", r.r11},
      {"r12", r.r12}, {"r13", r.r13}, {"r14", r.r14}, {"r15", r.r15}, {"rip", r.rip}, {"eflags", r.eflags},
      {"cs", r.cs},   {"ss", r.ss},   {"ds", r.ds},   {"es", r.es},   {"fs", r.fs},   {"gs", r.gs},
      {"fs_base", r.fs_base}, {"gs_base", r.gs_base}};
  std::vector<std::pair<std::string, std::string>> out;
  for (auto [name, value] : gpr) out.emplace_back(name, hexAddress(value));
  if (t.hasFpr) {
    for (int i = 0; i < 16; ++i) {
      // xmm registers as their two 64-bit halves, high first, as a debugger user reads them.
      const unsigned int* x = &t.fpr.xmm_space[i * 4];
      char buf[64];
      std::snprintf(buf, sizeof buf, "0x%08x%08x%08x%08x", x[3], x[2], x[1], x[0]);
      out.emplace_back("xmm" + std::to_string(i), buf);
    }
    out.emplace_back("mxcsr", hexAddress(t.fpr.mxcsr));
  }
  return out;
}

Result<Value> lookupVariable(const std::shared_ptr<const FrameContext>& f, std::string_view name) {
  auto r = resolveVariable(f, name);
  if (!r) return r.takeError();
  return valueOf(f, *r, name);
}

}  // namespace strata::native::symbols
