// setVariable: parse text by the variable's type and write it to memory or a register.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "internal.hpp"
#include "strata/native/symbols/values.hpp"
#include "value_internal.hpp"

namespace strata::native::symbols {

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

Result<std::int64_t> parseInteger(const std::string& text) {
  if (text == "true") return 1;
  if (text == "false") return 0;
  if (text == "nullptr" || text == "NULL") return 0;
  if (text.size() == 3 && text.front() == '\'' && text.back() == '\'') return static_cast<unsigned char>(text[1]);
  errno = 0;
  char* end = nullptr;
  long long v = text.starts_with("-") ? std::strtoll(text.c_str(), &end, 0)
                                      : static_cast<long long>(std::strtoull(text.c_str(), &end, 0));
  if (text.empty() || end == nullptr || *end != '\0' || errno != 0)
    return Error{errors::kBadValue, "'" + text + "' is not an integer", true};
  return static_cast<std::int64_t>(v);
}

Result<std::int64_t> parseEnumerator(Dwarf_Die enumType, const std::string& text) {
  Dwarf_Die e;
  if (dwarf_child(&enumType, &e) == 0) {
    do {
      const char* n = dwarf_diename(&e);
      Dwarf_Attribute attr;
      Dwarf_Sword s = 0;
      if (dwarf_tag(&e) == DW_TAG_enumerator && n != nullptr && text == n &&
          dwarf_attr(&e, DW_AT_const_value, &attr) != nullptr && dwarf_formsdata(&attr, &s) == 0)
        return static_cast<std::int64_t>(s);
    } while (dwarf_siblingof(&e, &e) == 0);
  }
  auto i = parseInteger(text);
  if (!i) return Error{errors::kBadValue, "'" + text + "' is not an enumerator of " + qualifiedTypeName(enumType), true};
  return i;
}

Result<void> writeBytes(const Value& v, const std::vector<std::uint8_t>& bytes) {
  switch (v.location.kind) {
    case ValueLocation::Kind::Memory:
      return v.frame->memory->write(v.location.address, bytes.data(), bytes.size());
    case ValueLocation::Kind::Register: {
      if (!v.frame->writeRegister) return Error{errors::kNotAssignable, "'" + v.name + "' lives in a register of a caller frame; it can only be set in the innermost frame", true};
      std::uint64_t reg = v.frame->registers.value[v.location.reg];
      std::memcpy(&reg, bytes.data(), std::min<std::size_t>(bytes.size(), 8));
      return v.frame->writeRegister(v.location.reg, reg);
    }
    case ValueLocation::Kind::Literal:
      return Error{errors::kNotAssignable, "'" + v.name + "' is a value the compiler computed, not a place in memory or a register", true};
    case ValueLocation::Kind::OptimizedOut:
      break;
  }
  return Error{errors::kOptimizedOut, "'" + v.name + "' is optimized out", true};
}

}  // namespace

Result<Presentation> setValue(const Value& v, std::string_view input) {
  std::string text = trim(input);
  if (!v.type.hasDie) return Error{errors::kNotAssignable, "cannot set a value without a type", true};
  Dwarf_Die t = stripCvTypedefs(v.type.die);
  int tag = dwarf_tag(&t);
  auto size = typeSize(v.type);
  if (!size || *size == 0 || *size > 16) return Error{errors::kNotAssignable, "cannot set a value of type " + typeName(v.type), true};
  std::vector<std::uint8_t> bytes(*size, 0);
  if (isFloating(v.type)) {
    char* end = nullptr;
    errno = 0;
    double d = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0) return Error{errors::kBadValue, "'" + text + "' is not a number", true};
    if (*size == 4) {
      float f = static_cast<float>(d);
      std::memcpy(bytes.data(), &f, 4);
    } else if (*size == 8) {
      std::memcpy(bytes.data(), &d, 8);
    } else {
      long double ld = d;
      std::memcpy(bytes.data(), &ld, std::min<std::size_t>(*size, sizeof ld));
    }
  } else if (tag == DW_TAG_base_type || tag == DW_TAG_enumeration_type || tag == DW_TAG_pointer_type) {
    auto parsed = tag == DW_TAG_enumeration_type ? parseEnumerator(t, text) : parseInteger(text);
    if (!parsed) return parsed.takeError();
    std::uint64_t raw = static_cast<std::uint64_t>(*parsed);
    if (v.bitSize != 0) {
      // Read-modify-write of the bytes that hold the bitfield.
      std::size_t n = (v.bitOffset + v.bitSize + 7) / 8;
      Value container = v;
      container.bitSize = 0;
      auto old = readValueBytes(container, n);
      if (!old) return old.takeError();
      std::uint64_t word = 0;
      std::memcpy(&word, old->data(), n);
      std::uint64_t mask = (v.bitSize >= 64 ? ~0ULL : ((1ULL << v.bitSize) - 1)) << v.bitOffset;
      word = (word & ~mask) | ((raw << v.bitOffset) & mask);
      bytes.assign(n, 0);
      std::memcpy(bytes.data(), &word, n);
    } else {
      std::memcpy(bytes.data(), &raw, std::min<std::size_t>(*size, 8));
    }
  } else {
    return Error{errors::kNotAssignable, "only scalars and pointers can be set; '" + v.name + "' is " + typeName(v.type), true};
  }
  if (auto w = writeBytes(v, bytes); !w) return w.takeError();
  Value updated = v;
  if (v.location.kind == ValueLocation::Kind::Register) {
    // The frame's register snapshot is stale now; show what was written.
    updated.location = ValueLocation{ValueLocation::Kind::Literal, 0, -1, bytes};
  }
  return present(updated);
}

}  // namespace strata::native::symbols
